"""Messages that tell the user how to go on: each one is followed here to the fix it names."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest
from dbutil import edited_copy
from logutil import messages_logged

from msprof_compare import cli
from msprof_compare.errors import ProfileError, StepError, UsageError
from msprof_compare.loaders import load_profile, traceio
from msprof_compare.options import build_options

DATA = Path(__file__).parent / "data"
L1_DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
L1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
USAGE = ("the comparison is the 'compare' sub-command, its options follow it: msprof-analyze compare -d COMPARISON "
         "-bp BASE [options] (see 'msprof-analyze compare --help')")


def _analyze(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(list(args))
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize(("args", "named"), [
    (("-d", "a", "-bp", "b"), "-d"),
    (("-bp", "b", "-d", "a"), "-bp"),  # click alone said "No such option: -b"
    (("--profiling_path=a", "--benchmark_profiling_path", "b"), "--profiling_path"),
    (("--force", "-d", "a"), "--force"),
    (("-d", "a", "compare", "-bp", "b"), "-d"),  # before the sub-command word: click's "No such option" too
])
def test_compare_options_without_the_subcommand(capsys: pytest.CaptureFixture, args: tuple, named: str) -> None:
    """The original's usage without its ``compare`` word, or with options before it, got click's bare "No such
    option"."""
    code, err = _analyze(capsys, *args)
    assert code == 2
    assert err == f"error: No such option: {named}; {USAGE}\n"


def test_unknown_options_keep_clicks_message(capsys: pytest.CaptureFixture) -> None:
    assert _analyze(capsys, "--bogus") == (2, "error: No such option: --bogus (see 'msprof-analyze --help')\n")
    code, err = _analyze(capsys, "compare", "--bogus", "-d", "a", "-bp", "b")
    assert (code, err) == (2, "error: No such option: --bogus (see 'msprof-analyze compare --help')\n")


def test_a_short_prefix_of_an_option_names_it(capsys: pytest.CaptureFixture) -> None:
    """"-b" for "-bp" (a new user's typo) got a bare "No such option: -b": click suggests by similarity, which a
    two-letter option given one letter misses, though "--bp" got "(Possible options: --help, -bp)"."""
    code, err = _analyze(capsys, "compare", "-b", "base", "-d", "a")
    assert (code, err) == (2, "error: No such option: -b (Possible options: -bp) (see 'msprof-analyze compare "
                              "--help')\n")
    with pytest.raises(SystemExit) as info:
        cli.compare_main(["-b", "base", "-d", "a"])
    assert (info.value.code, capsys.readouterr().err) == (
        2, "error: No such option: -b (Possible options: -bp) (see 'msprof-compare --help')\n")
    code, err = _analyze(capsys, "compare", "--base", "b", "-d", "a")  # click suggests it itself (8.0: "Did you mean")
    assert err.startswith("error: No such option: --base ") and err.count("--base_step") == 1
    code, err = _analyze(capsys, "compare", "-p", "b", "-d", "a")  # no option starts so: click's message alone
    assert err == "error: No such option: -p (see 'msprof-analyze compare --help')\n"


#: A mistyped option and the options every face names for it, by hand from the options' names: a word of two
#: options (step), a plural of one (steps), words inside one (kernel_num), a near spelling, a prefix (-b, --base),
#: a comparison's sheets or an abbreviation for its word (module, op).
_TYPOS = [
    ("step", ["base_step", "comparison_step"]),
    ("steps", ["base_step", "comparison_step"]),
    ("kernel_num", ["max_kernel_num"]),
    ("enable_profilng_compare", ["enable_profiling_compare"]),
    ("output_formats", ["output_format"]),
    ("base", ["base_step"]),
    ("bogus", []),
    # a comparison named by its sheets or an abbreviation: by spelling alone api, memory and api were named
    ("enable_module_compare", ["enable_operator_compare"]),
    ("enable_op_compare", ["enable_operator_compare"]),
    ("enable_mem_compare", ["enable_memory_compare"]),
    ("enable_comm_compare", ["enable_communication_compare"]),
    ("module", ["disable_module", "enable_operator_compare"]),
    ("_", []),  # no word at all: no option holds it (every option held an empty run of words)
]


@pytest.mark.parametrize(("typed", "meant"), _TYPOS, ids=[t for t, _ in _TYPOS])
def test_every_face_names_the_same_options_for_a_typo(capsys: pytest.CaptureFixture, typed: str,
                                                      meant: list[str]) -> None:
    """``compare(step=3)`` said "unknown option(s): step" with no word of the two step options, the CLI named
    --base_step and --help (click's similarity) and the script nothing: every face now names the same options
    (``options.close_names``), each in its own words. argparse takes --base as an abbreviation of --base_step,
    so the script has no typo there."""
    flags = ", ".join(f"--{m}" for m in meant)
    hint = f" (Possible options: {flags})" if meant else ""
    for prog, run in (("msprof-analyze compare", lambda a: cli.analyze_main(["compare", *a])),
                      ("msprof-compare", cli.compare_main),
                      ("python -m msprof_compare compare",
                       lambda a: cli.analyze_main(["compare", *a], prog="python -m msprof_compare"))):
        with pytest.raises(SystemExit) as info:
            run(["-d", "a", "-bp", "b", f"--{typed}", "3"])
        assert (info.value.code, capsys.readouterr().err) == (
            2, f"error: No such option: --{typed}{hint} (see '{prog} --help')\n")
    if typed != "base":
        with pytest.raises(SystemExit) as info:
            cli.build_script_parser().parse_args(["b", "a", f"--{typed}", "3"])
        assert info.value.code == 2
        assert capsys.readouterr().err == (f"error: unrecognized arguments: --{typed} 3{hint} (see "
                                           "'performance_compare.py --help')\n")
    with pytest.raises(UsageError) as err:
        build_options(**{typed: 3})
    said = " or ".join(meant)
    assert str(err.value) == f"unknown option(s): {typed}" + (f" (did you mean {said}?)" if meant else "")


#: Two neighbouring letters swapped, and what each face names for it, by hand: difflib's ratio of a four-letter
#: name with a swap is 0.75 ("hlep" / "help": h, then l or e, then p match), under the 0.8 cutoff, so --help went
#: unnamed. The script has no -bp (its paths are positional), compare() no help keyword.
_SWAPS = [
    # (typed, the click faces' hint, the script's hint, compare()'s hint)
    ("--hlep", "--help", "--help", ""),
    ("--hepl", "--help", "--help", ""),
    ("--fcore", "--force", "--force", "force"),
    ("--pb", "-bp", "", ""),
    ("--hpel", "", "", ""),  # two swaps away: no name
    ("--lehp", "", "", ""),  # letters two apart swapped: no neighbours
]


@pytest.mark.parametrize(("typed", "cli_hint", "script_hint", "api_hint"), _SWAPS, ids=[t for t, *_ in _SWAPS])
def test_every_face_names_the_option_of_two_swapped_letters(capsys: pytest.CaptureFixture, typed: str,
                                                             cli_hint: str, script_hint: str, api_hint: str) -> None:
    """A transposition, the commonest typo, is named on every face, and nothing beyond it is."""
    def said(hint: str) -> str:
        return f" (Possible options: {hint})" if hint else ""

    for prog, run in (("msprof-analyze compare", lambda a: cli.analyze_main(["compare", *a])),
                      ("msprof-compare", cli.compare_main)):
        with pytest.raises(SystemExit) as info:
            run(["-d", "a", "-bp", "b", typed])
        assert (info.value.code, capsys.readouterr().err) == (
            2, f"error: No such option: {typed}{said(cli_hint)} (see '{prog} --help')\n")
    with pytest.raises(SystemExit) as info:
        cli.build_script_parser().parse_args(["b", "a", typed])
    assert (info.value.code, capsys.readouterr().err) == (
        2, f"error: unrecognized arguments: {typed}{said(script_hint)} (see 'performance_compare.py --help')\n")
    with pytest.raises(UsageError) as err:
        build_options(**{typed.lstrip("-"): True})
    hint = f" (did you mean {api_hint}?)" if api_hint else ""
    assert str(err.value) == f"unknown option(s): {typed.lstrip('-')}{hint}"


@pytest.mark.parametrize("before", [[], ["-bp", "b"]])
def test_a_short_option_with_two_letters_swapped_is_named_as_typed(capsys: pytest.CaptureFixture,
                                                                   before: list[str]) -> None:
    """click reads "-pb" as the letters -p and -b and said "No such option: -p", which neither showed what was
    typed nor named -bp; a known -bp given before it is not taken for it."""
    code, err = _analyze(capsys, "compare", "-d", "a", *before, "-pb", "b")
    assert (code, err) == (2, "error: No such option: -pb (Possible options: -bp) (see 'msprof-analyze compare "
                              "--help')\n")
    code, err = _analyze(capsys, "compare", "-d", "a", "-bp", "b", "-b", "c")
    assert (code, err) == (2, "error: No such option: -b (Possible options: -bp) (see 'msprof-analyze compare "
                              "--help')\n")


def test_the_script_names_the_options_of_each_typo(capsys: pytest.CaptureFixture) -> None:
    """argparse lists every unrecognised argument at once: the options near each are named for it."""
    with pytest.raises(SystemExit):
        cli.build_script_parser().parse_args(["b", "a", "--step", "3", "--zeta", "--kernel_num=4"])
    assert capsys.readouterr().err == (
        "error: unrecognized arguments: --step 3 --zeta --kernel_num=4 (Possible options: --base_step, "
        "--comparison_step for --step; --max_kernel_num for --kernel_num) (see 'performance_compare.py --help')\n")


@pytest.mark.parametrize(("statement", "what"), [
    ("DELETE FROM STEP_TIME", "its STEP_TIME table holds no step"),
    ("DROP TABLE STEP_TIME", "it has no STEP_TIME table"),
])
def test_db_without_steps_says_to_run_without_step_options(tmp_path: Path, statement: str, what: str) -> None:
    """"Please re-collect it." (the original's words) alone hid that the whole profile compares as it is."""
    copy = edited_copy(L1_DB, tmp_path / "ascend_pytorch_profiler_0.db", statement)
    opts, _ = build_options()
    with pytest.raises(StepError) as err:
        load_profile(str(copy), opts, step=50)
    assert str(err.value) == (f"{copy}: The profiling data lacks step markers. Please re-collect it. ({what}, so "
                              "no step can be chosen: run without --base_step / --comparison_step)")
    assert len(load_profile(str(copy), opts).kernels) == 187  # the advice works: the whole profile loads


def test_step_missing_from_kernel_details_names_the_steps_it_holds(samples: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """The trace holds ProfilerStep#50 but kernel_details.csv was written for step 49 (its Step Id edited): the
    error names the steps the CSV does hold, since the trace's step list (50) would send the user in circles."""
    comp = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / L1_TEXT, comp)
    kd = comp / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="") as fh:
        rows = list(csv.reader(fh))
    assert {r[0] for r in rows[1:]} == {"50"} and len(rows) == 192
    for r in rows[1:]:
        r[0] = "49"
    with open(kd, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    out = tmp_path / "out"
    code, err = _analyze(capsys, "compare", "-d", str(comp), "-bp", str(samples / L1_TEXT), "--base_step", "50",
                         "--comparison_step", "50", "-o", str(out))
    assert code == 2
    assert err.splitlines()[-1] == (f"error: {kd}: There is no kernel details information for step 50, please check "
                                    "whether the data contains this step. (comparison side: it holds step 49)")
    assert not out.exists()


def test_decompressed_size_cap_names_the_size(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The user raising the limit needs the size: the gzip trailer's (a single member under 4 GiB: exact).
    A trailer stating no more than the limit (several members, 4 GiB or more) is not quoted."""
    trace = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    size = len(gzip.decompress(trace.read_bytes()))
    for cap in (trace.stat().st_size, size - 1):  # the first read stops at cap + 1 bytes
        monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(cap))
        with pytest.raises(ProfileError) as err:
            traceio.read_bytes(str(trace))
        assert err.value.message == (f"decompressed trace is over the {cap} byte limit (its gzip trailer gives "
                                     f"{size} bytes)")
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(size))
    assert len(traceio.read_bytes(str(trace))) == size
    two = tmp_path / "two_members.json.gz"  # the trailer states the last member's size only
    body = gzip.decompress(trace.read_bytes())
    two.write_bytes(gzip.compress(body) + gzip.compress(b" "))
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(size - 1))
    with pytest.raises(ProfileError) as err:
        traceio.read_bytes(str(two))
    assert err.value.message == f"decompressed trace is over the {size - 1} byte limit"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
@pytest.mark.parametrize("layout", ["file", "kineto", "directory"])
def test_a_utf16_trace_is_named_and_the_conversion_followed(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                            encoding: str, layout: str) -> None:
    """A trace re-saved as UTF-16 (a Windows PowerShell ``>`` redirect writes UTF-16LE with a byte-order mark)
    was refused as "not a JSON trace", and a trace_view.json in a profiling folder was first transcoded as GB18030
    into garbage. It is now named as UTF-16, and the conversion its hint names (here: Python's codec in place of
    iconv) gives back a file that loads. Inputs: the torch_npu and AlexNet excerpts, re-encoded."""
    npu = DATA / "npu" / "rank0_ascend_pt"
    if layout == "directory":
        src = tmp_path / "rank0_ascend_pt"
        shutil.copytree(npu, src)
        trace = src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    else:
        original = npu / "ASCEND_PROFILER_OUTPUT" / "trace_view.json" if layout == "file" else \
            DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
        trace = tmp_path / original.name
        shutil.copyfile(original, trace)
        src = trace
    text = trace.read_text(encoding="utf-8")
    # utf-16 writes a little-endian BOM; utf-16-be none: add it, as a big-endian writer does
    trace.write_bytes(text.encode(encoding) if encoding == "utf-16" else b"\xfe\xff" + text.encode(encoding))
    params = {"base_profiling_path": str(src), "comparison_profiling_path": str(src),
              "output_path": str(tmp_path / "out"), "enable_profiling_compare": True}
    (tmp_path / "out").mkdir()
    assert cli.execute(params) == 1
    err = capsys.readouterr().err
    assert f"error: {trace}: UTF-16 text (it starts with a UTF-16 byte-order mark" in err
    assert "iconv -f UTF-16 -t UTF-8" in err and "GB18030" not in err and "Traceback" not in err
    assert not list((tmp_path / "out").iterdir())
    trace.write_bytes(trace.read_bytes().decode("utf-16").encode("utf-8"))  # what iconv -f UTF-16 -t UTF-8 does
    assert cli.execute(params) == 0


def _excerpt_with(tmp_path: Path, name: str, encoding: str = "utf-16") -> tuple[Path, dict]:
    """The torch_npu excerpt copied with its file ``name`` re-encoded (``utf-16`` writes a byte-order mark,
    ``utf-16-le`` / ``-be`` none), and the params comparing the copy with itself into an empty folder."""
    src = tmp_path / "rank0_ascend_pt"
    shutil.copytree(DATA / "npu" / "rank0_ascend_pt", src)
    path = src / name
    path.write_bytes(path.read_text(encoding="utf-8").encode(encoding))
    (tmp_path / "out").mkdir()
    return path, {"base_profiling_path": str(src), "comparison_profiling_path": str(src),
                  "output_path": str(tmp_path / "out"), "enable_profiling_compare": True}


def test_a_utf16_csv_is_named_and_the_conversion_followed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """kernel_details.csv re-saved as UTF-16 (Excel's "Unicode Text", a PowerShell redirect) was refused with
    Python's "'utf-8' codec can't decode byte 0xff in position 0"; it is now named as UTF-16 with the conversion,
    which gives back a folder that loads. Input: the torch_npu excerpt, its kernel_details.csv re-encoded."""
    csv_path, params = _excerpt_with(tmp_path, "ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    assert cli.execute(params) == 1
    err = capsys.readouterr().err
    assert f"error: {csv_path}: UTF-16 text (it starts with a UTF-16 byte-order mark" in err
    assert "iconv -f UTF-16 -t UTF-8" in err and "Traceback" not in err
    assert not list((tmp_path / "out").iterdir())
    csv_path.write_bytes(csv_path.read_bytes().decode("utf-16").encode("utf-8"))
    assert cli.execute(params) == 0


def test_a_utf16_side_json_is_named_and_the_conversion_followed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A JSON side file re-saved as UTF-16 was refused as "malformed JSON: invalid character (byte 0)"; it is
    named as UTF-16 with the conversion, as a trace or CSV so saved, and the conversion gives back a folder that
    loads. Input: the torch_npu excerpt, its communication.json re-encoded (profiler_metadata.json, optional, is
    read as absent instead: the next test)."""
    side, params = _excerpt_with(tmp_path, "ASCEND_PROFILER_OUTPUT/communication.json")
    assert cli.execute(params) == 1
    err = capsys.readouterr().err
    assert f"error: {side}: UTF-16 text (it starts with a UTF-16 byte-order mark" in err
    assert "iconv -f UTF-16 -t UTF-8" in err and "Traceback" not in err
    assert not list((tmp_path / "out").iterdir())
    side.write_bytes(side.read_bytes().decode("utf-16").encode("utf-8"))
    assert cli.execute(params) == 0


def test_a_utf16_profiler_metadata_is_read_as_absent_with_the_conversion(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    """profiler_metadata.json is optional (process-group names, distributed settings: no figure of its own): re-saved
    as UTF-16 it no longer stops the run; one warning names it as UTF-16, says it is read as absent and gives the
    conversion, and the reports are written. Input: the torch_npu excerpt, its profiler_metadata.json re-encoded."""
    side, params = _excerpt_with(tmp_path, "profiler_metadata.json")
    assert cli.execute(params) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if str(side) in line]
    assert len(said) == 1 and "[WARNING]" in said[0] and "Traceback" not in err
    assert f"] {side}: UTF-16 text (it starts with a UTF-16 byte-order mark" in said[0]
    assert said[0].endswith("; read as absent (both sides: no process-group names or distributed settings from it); "
                            "use the file the profiler wrote, or convert it: iconv -f UTF-16 -t UTF-8 "
                            f"{side} > {side}.utf8 && mv {side}.utf8 {side}")
    assert [p.suffix for p in (tmp_path / "out").iterdir()] == [".xlsx"]


@pytest.mark.parametrize("order", ["LE", "BE"])
@pytest.mark.parametrize(("name", "rule"), [
    ("ASCEND_PROFILER_OUTPUT/trace_view.json", "profiler traces are UTF-8"),
    ("ASCEND_PROFILER_OUTPUT/kernel_details.csv", "the profiler's CSVs are UTF-8"),
    ("ASCEND_PROFILER_OUTPUT/communication.json", "the profiler's JSON files are UTF-8")])
def test_utf16_without_a_byte_order_mark_is_named(tmp_path: Path, capsys: pytest.CaptureFixture, order: str,
                                                  name: str, rule: str) -> None:
    """UTF-16 without a byte-order mark (.NET's Encoding.Unicode, Python's utf-16-le) was read as UTF-8: a
    trace_view.json or communication.json as "malformed ... JSON: object keys must be strings (byte 1)" (LE) or
    "not a JSON trace" (BE), a kernel_details.csv as missing every required column. It is named as UTF-16 of its
    byte order, with the iconv conversion for that order, which gives back a folder that loads (found by
    fuzzing, session 57). Input: the torch_npu excerpt, one file re-encoded."""
    path, params = _excerpt_with(tmp_path, name, f"utf-16-{order.lower()}")
    assert cli.execute(params) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    command = f"iconv -f UTF-16{order} -t UTF-8 {path} > {path}.utf8 && mv {path}.utf8 {path}"
    assert lines == [f"error: {path}: UTF-16{order} text without a byte-order mark (a NUL byte beside each of its "
                     f"first characters): {rule} (both sides: use the file the profiler wrote, or convert it: "
                     f"{command})"]
    assert not list((tmp_path / "out").iterdir())
    _run_hint(command, path, f"utf-16-{order.lower()}")
    assert cli.execute(params) == 0


def _run_hint(command: str, path: Path, encoding: str) -> None:
    """Run a hint's conversion (it said "iconv ... IN > OUT", a template) where iconv is there, else do what it
    does (Python's codec); either way the file is then its UTF-8 text."""
    import shutil as sh
    import subprocess

    want = path.read_bytes().decode(encoding).removeprefix("\ufeff").encode("utf-8")
    if sh.which("iconv") and sh.which("bash"):
        subprocess.run(["bash", "-c", command], check=True)
    else:
        path.write_bytes(want)
    assert path.read_bytes().removeprefix(b"\xef\xbb\xbf") == want and not Path(f"{path}.utf8").exists()


TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"


def _gzip_command(trace: Path | str) -> str:
    """The gzip trace's conversion, each step's failure (iconv's ends its pipeline) stopping it before the mv."""
    return (f"gzip -dc {trace} | iconv -f UTF-16 -t UTF-8 > {trace}.utf8 && gzip {trace}.utf8 "
            f"&& mv {trace}.utf8.gz {trace}")


def _refused_with(tmp_path: Path, capsys: pytest.CaptureFixture, raw: bytes, command: str) -> tuple[Path, dict]:
    """``raw`` written as t.pt.trace.json.gz and compared with itself: refused, the hint's command ``command``
    (``TRACE`` in it: the file's path); then bash, iconv and gzip are asked for, as the caller runs it. The trace
    and the run's parameters."""
    import shutil as sh

    trace = tmp_path / "t.pt.trace.json.gz"
    trace.write_bytes(raw)
    params = {"base_profiling_path": str(trace), "comparison_profiling_path": str(trace),
              "output_path": str(tmp_path / "out"), "enable_profiling_compare": True}
    (tmp_path / "out").mkdir()
    assert cli.execute(params) == 1
    said = command.replace("TRACE", str(trace))
    assert f"(both sides: use the file the profiler wrote, or convert it: {said})" in capsys.readouterr().err
    if not (sh.which("iconv") and sh.which("gzip") and sh.which("bash")):
        pytest.skip("iconv, gzip or bash absent")
    return trace, params


def test_a_gzip_utf16_trace_gets_a_conversion_through_gzip(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A gzip Kineto trace whose text is UTF-16 (re-saved, then compressed): iconv on the .gz file converts
    nothing; the hint's command inflates it, converts and compresses it again, after which the trace loads and
    nothing is left beside it. Input: the timesformer excerpt, re-encoded and gzipped."""
    import gzip
    import subprocess

    text = TIMESFORMER.read_text(encoding="utf-8")
    trace, params = _refused_with(tmp_path, capsys, gzip.compress(text.encode("utf-16")), _gzip_command("TRACE"))
    subprocess.run(["bash", "-c", _gzip_command(trace)], check=True)
    assert gzip.decompress(trace.read_bytes()).decode("utf-8").removeprefix("\ufeff") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", trace.name]
    assert cli.execute(params) == 0


def test_a_utf16_trace_under_a_gz_name_is_converted_as_the_text_it_is(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """A UTF-16 trace that is no gzip under a .gz name (a PowerShell redirect of a downloaded .json.gz: the download
    inflated, the redirect wrote UTF-16), which the loader reads by its bytes. The hint went by the name: "gzip -dc
    F | iconv ... | gzip > F.utf8 && mv F.utf8 F", whose gzip -dc fails and whose status is the last gzip's, so the
    command replaced the 270 KB trace with a 20-byte empty gzip. It is now iconv's, and the trace then loads."""
    import subprocess

    text = TIMESFORMER.read_text(encoding="utf-8")
    command = "iconv -f UTF-16 -t UTF-8 TRACE > TRACE.utf8 && mv TRACE.utf8 TRACE"
    trace, params = _refused_with(tmp_path, capsys, text.encode("utf-16"), command)
    subprocess.run(["bash", "-c", command.replace("TRACE", str(trace))], check=True)
    assert trace.read_bytes().decode("utf-8").removeprefix("\ufeff") == text
    assert cli.execute(params) == 0


def test_a_gzip_conversion_that_fails_leaves_the_trace_as_it_was(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """The gzip trace's command where iconv stops part way (a lone UTF-16 surrogate in a key, 42 KB into the
    text): "... | iconv ... | gzip > F.utf8 && mv F.utf8 F" took the last gzip's status, 0, and replaced the trace
    with its first 21 KB of text. iconv now ends its pipeline: the command fails and the trace is as it was."""
    import gzip
    import subprocess

    text = TIMESFORMER.read_text(encoding="utf-8")
    at = text.index('"name"', 1000)
    raw = gzip.compress((text[:at] + '"\ud800x": 1, ' + text[at:]).encode("utf-16", "surrogatepass"))
    trace, _ = _refused_with(tmp_path, capsys, raw, _gzip_command("TRACE"))
    assert subprocess.run(["bash", "-c", _gzip_command(trace)], capture_output=True).returncode != 0
    assert trace.read_bytes() == raw


def test_bomless_utf16_needs_two_ascii_characters() -> None:
    """The byte-order guess asks for ASCII characters each beside a NUL, two at least: one character and a
    NUL, a NUL-padded binary file or UTF-8 text are no UTF-16 (computed by hand from the bytes)."""
    assert traceio._bomless_utf16("{[".encode("utf-16-le")) == "LE"
    assert traceio._bomless_utf16('["x'.encode("utf-16-be")) == "BE"
    assert traceio._bomless_utf16(b"{\x00") == ""  # one character
    assert traceio._bomless_utf16(b"\x00\x00\x00\x00") == ""  # NULs only
    assert traceio._bomless_utf16(b"\xff\x00\xfe\x00") == ""  # not ASCII
    assert traceio._bomless_utf16(b'[{"ph": "X"}]') == ""


@pytest.mark.parametrize(("value", "shown"), [(1e200, "1e+200"), (-1e200, "-1e+200")])
def test_an_out_of_range_float_time_is_quoted_as_written(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                         value: float, shown: str) -> None:
    """The AlexNet H200 excerpt with its first complete event's ``dur`` edited to +-1e200 (as a damaged writer
    leaves it): the error quoted numpy 2's repr, ``np.float64(1e+200)``, and dropped the sign of a negative one.
    It quotes the value as the file has it (JSON ``1e+200``), sign included."""
    src = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    doc = json.loads(gzip.decompress(src.read_bytes()))
    at, first = next((i, e) for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X")
    first["dur"] = value
    trace = tmp_path / "rank0.pt.trace.json"
    trace.write_text(json.dumps(doc))
    assert f'"dur": {shown}' in trace.read_text()  # the file's own spelling of the value
    out = tmp_path / "out"
    code, err = _analyze(capsys, "compare", "-d", str(trace), "-bp", str(src), "-o", str(out))
    assert code == 1
    assert err.splitlines()[-1] == (f"error: {trace}: invalid trace event: event {at} of traceEvents (counting from "
                                    f"0; ph 'X', name {first['name']!r}) has dur {shown}: out of range (beyond "
                                    "int64 nanoseconds) (comparison side)")
    assert not out.exists() or not list(out.iterdir())


@pytest.mark.parametrize(("text", "why"), [  # Python's own wording of the error may vary by version: the position
    ("{bad", "(character 1)"),  # the brace is the 1st character
    ("{'a': 'b',,}", "(character 11)"),  # the 2nd comma is the 11th character
    ("{'a': 'b'}}", "(character 11)"),
])
def test_an_op_name_map_syntax_error_shows_no_python_internals(capsys: pytest.CaptureFixture, text: str,
                                                              why: str) -> None:
    """A ``--op_name_map`` that does not parse showed Python's SyntaxError text, ``'{' was never closed
    (<unknown>, line 1)``: ``<unknown>`` is the file name ``ast`` gives a string. It says where, in words."""
    code, err = _analyze(capsys, "compare", "-d", "a", "-bp", "b", "--op_name_map", text)
    assert code == 2
    [line] = [line for line in err.splitlines() if "Security Warning" not in line]  # the root warning aside
    head = "error: Invalid value for '--op_name_map': "
    tail = "; write a literal dict such as \"{'aten::mm': 'aclnnMm'}\""
    assert line.startswith(head) and line.endswith(f" {why}{tail}") and "<unknown>" not in line, line


def test_an_npu_trace_without_flows_is_told_so_as_a_gpu_trace_is(samples: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """msinsight's heatMap trace_view.json holds torch ops (cpu_op) but no flow event (checked below): a GPU
    trace without flows says why no op gets a kernel, this NPU trace said only the original's bare sentence."""
    trace = samples / "msinsight/server/src/test/test_data/heatMap/trace_view.json"
    events = json.loads(trace.read_text())
    assert sum(e.get("cat") == "cpu_op" for e in events) == 4
    assert not [e for e in events if e.get("ph") in ("s", "f", "t")]
    code, err = _analyze(capsys, "compare", "-d", str(trace), "-bp", str(trace), "--enable_operator_compare",
                         "-o", str(tmp_path))
    assert code == 0
    said = {line.split("]", 1)[1] for line in err.splitlines() if "flow event" in line}
    assert said == {f"[WARNING] Can't find any flow event in the file: {trace} (both sides: the trace holds no flow "
                    "linking an op to its kernels, so no op gets a kernel)"}


def test_op_name_map_key_that_renames_nothing_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A misspelt ``--op_name_map`` key passed without a word: the map renamed nothing and the user read the
    unchanged match rate as the map not helping. Keys are an op's whole name ('cudaDeviceSynchronize', which pairs
    with the ROCm trace's 'hipDeviceSynchronize') or part of a module name ('BertLayer', of 'nn.Module: BertLayer_0');
    'aten::lineer' and 'bertlayer' are neither. ('aten::linear': 'aten::mm', which this test gave as a key that
    works, renames both sides' aten::linear alike and pairs nothing: now said, ``test_op_name_map_idle.py``; so does
    'BertLayer', of the 68 module paths of each side inside its 4 BertLayer modules, now said alike.)"""
    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    args = ["compare", "-bp", base, "-d", comparison, "-o", str(tmp_path), "--enable_operator_compare"]
    mapping = ("{'cudaDeviceSynchronize': 'hipDeviceSynchronize', 'BertLayer': 'Layer', 'aten::lineer': 'aten::mm', "
               "'bertlayer': 'x'}")
    code, err = _analyze(capsys, *args, "--op_name_map", mapping)
    assert code == 0
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if "--op_name_map" in line]
    assert lines == ["--op_name_map: 'aten::lineer', 'bertlayer' name no operator of either side and appear in no "
                     "module name, so they rename nothing (names are case-sensitive: copy them from the "
                     "OperatorCompare or ModuleCompare sheet).",
                     "--op_name_map: the entry 'BertLayer': 'Layer' renames the 68 base and 68 comparison module paths "
                     "holding 'BertLayer' alike, so they pair as without it (an entry pairs a name of one side with "
                     "another name of the other)."]
    code, err = _analyze(capsys, *args, "--op_name_map", "{'cudaDeviceSynchronize': 'hipDeviceSynchronize'}")
    assert code == 0 and "--op_name_map" not in err  # an entry that pairs ops across two names: no word
    # under --disable_details the map is said to be ignored, once: no second warning sending the user to copy
    # names from the OperatorCompare / ModuleCompare sheets that run hides (found by the session-43 review)
    code, err = _analyze(capsys, *args, "--op_name_map", mapping, "--disable_details")
    assert code == 0
    assert [line.split("] ", 1)[1] for line in err.splitlines()
            if "--op_name_map:" in line or "op_name_map parameter" in line] == [
        "The op_name_map parameter is ignored: it only takes effect when operators are matched, which "
        "disable_details turns off."]


@pytest.mark.parametrize(("flags", "sheet", "why"), [
    (("--enable_memory_compare",), "MemoryCompare", "only --enable_operator_compare compares them"),
    (("--enable_operator_compare", "--disable_module"), "OperatorCompare", "--disable_module")])
def test_op_name_map_unused_key_hint_names_a_sheet_the_run_writes(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                  flags: tuple[str, ...], sheet: str, why: str
                                                                  ) -> None:
    """The unused-key warning sent the user to "the OperatorCompare or ModuleCompare sheet" in a memory comparison
    alone (whose workbook holds MemoryCompareStatistic and MemoryCompare only) and under --disable_module (no module
    sheet): the bundled BERT pair's workbooks, read back, hold the sheet now named, with its Operator Name column.
    Neither run compares modules, so the line says so rather than that the key is in no module name, which their
    loaders need not have read (session 78)."""
    import openpyxl

    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", str(tmp_path), *flags,
                         "--op_name_map", "{'aten::lineer': 'aten::mm'}")
    assert code == 0
    assert [line.split("] ", 1)[1] for line in err.splitlines() if "--op_name_map" in line] == [
        "--op_name_map: 'aten::lineer' names no operator of either side and could rename only module paths, which "
        f"this run does not compare ({why}), so it renames nothing (names are case-sensitive: copy them from the "
        f"{sheet} sheet)."]
    book = openpyxl.load_workbook(next(tmp_path.glob("*.xlsx")), read_only=True)
    assert sorted(book.sheetnames) == [sheet, f"{sheet}Statistic"]
    assert "Operator Name" in next(book[sheet].iter_rows(min_row=3, max_row=3, values_only=True))
    book.close()


def test_op_name_map_entry_whose_name_is_renamed_again_is_named(capsys: pytest.CaptureFixture, samples: Path,
                                                               tmp_path: Path) -> None:
    """The map renames once, on both sides (reference-2 §0.4): a two-way map written to say "these are the same
    op" ({a: b, b: a}) swaps the names, so the GPU's NativeDropoutBackward0 (base) and the NPU's
    NpuDropoutBackward0 (comparison) become each other's name and still pair nothing, without a word (the match
    rate stays as it was); one entry pairs them (two OperatorCompare rows). The warning names the swap once; a
    chain (a -> b, b -> c) likewise."""
    from msprof_compare.api import compare

    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    a, b = (f"autograd::engine::evaluate_function: {n}DropoutBackward0" for n in ("Native", "Npu"))
    for mapping, paired in (({a: b, b: a}, 0), ({a: b}, 2)):
        ops = compare(gpu, str(samples / L1_TEXT), op_name_map=mapping, disable_module=True,
                      enable_operator_compare=True).sheet("OperatorCompare")
        assert int(((ops["Operator Name"] == a) & (ops["Operator Name.1"] == b)).sum()) == paired
    args = ["compare", "-bp", gpu, "-d", str(samples / L1_TEXT), "-o", str(tmp_path), "--enable_operator_compare"]
    code, err = _analyze(capsys, *args, "--op_name_map", repr({a: b, b: a, "x": "y", "y": "z"}))
    assert code == 0
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if "renames once" in line]
    assert lines == [f"--op_name_map renames once, on both sides: {a!r} becomes {b!r} and {b!r} becomes {a!r}, so an "
                     f"op named {a!r} on one side and {b!r} on the other still differ; 'x' becomes 'y' and 'y' becomes "
                     "'z', so an op named 'x' on one side and 'y' on the other still differ; give one entry per pair "
                     "of names."]
    for mapping in ({a: b}, {a: b, b: b}):  # one direction, or an identity entry: nothing said
        code, err = _analyze(capsys, *args, "--op_name_map", repr(mapping))
        assert code == 0 and "renames once" not in err


def test_op_name_map_entries_renamed_again_past_three_are_counted(capsys: pytest.CaptureFixture, samples: Path,
                                                                  tmp_path: Path) -> None:
    """Past three entries renamed again, the warning names the first three and counts them all, so that a long
    map does not fill the screen (the "(N in all)" part could be dropped with no test failing)."""
    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    mapping = {f"x{i}": f"y{i}" for i in range(5)} | {f"y{i}": f"z{i}" for i in range(5)}
    code, err = _analyze(capsys, "compare", "-bp", gpu, "-d", str(samples / L1_TEXT), "-o", str(tmp_path),
                         "--enable_operator_compare", "--op_name_map", repr(mapping))
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if "renames once" in line]
    assert code == 0 and len(lines) == 1
    assert lines[0].endswith("'x2' becomes 'y2' and 'y2' becomes 'z2', so an op named 'x2' on one side and 'y2' on "
                             "the other still differ (5 in all); give one entry per pair of names.")
    assert "'x0' becomes 'y0'" in lines[0] and "'x3'" not in lines[0] and "'x4'" not in lines[0]


@pytest.mark.parametrize("gpu_is_base", [True, False])
def test_step_with_gpu_data_names_the_gpu_side_and_the_way_on(capsys: pytest.CaptureFixture, samples: Path,
                                                              tmp_path: Path, gpu_is_base: bool) -> None:
    """A GPU-to-NPU user who gave steps got the original's bare "step id is invalid in GPU data, please use
    this when comparing between NPU datas.": no word of which input is the GPU trace, nor how to go on."""
    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    npu = str(samples / L1_TEXT)
    base, comparison = (gpu, npu) if gpu_is_base else (npu, gpu)
    code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", str(tmp_path),
                         "--base_step", "50", "--comparison_step", "50")
    assert code == 2 and list(tmp_path.iterdir()) == []
    side = "base side" if gpu_is_base else "comparison side"  # named as the other errors of one side are
    assert [line for line in err.splitlines() if "root" not in line] == [
        f"error: {gpu}: step id is invalid in GPU data, please use this when comparing between NPU datas. ({side}: "
        "a GPU trace, where the step options do not apply: leave out --base_step and --comparison_step to compare "
        "the whole profiles)"]


@pytest.mark.parametrize(("name", "flags", "written", "notice"), [
    ("run.json", [], "run.xlsx", "-o {out}/run.json names a .json file but --output_format is xlsx (the default), "
                                 "so the report is written as {out}/run.xlsx; add --output_format json (or "
                                 "xlsx,json) for the JSON report."),
    ("run.xlsx", ["--output_format", "json"], "run.json",
     "-o {out}/run.xlsx names a .xlsx file but --output_format json, so the report is written as {out}/run.json; "
     "add --output_format xlsx (or xlsx,json) for the workbook."),
    ("run.json", ["--output_format", "json"], "run.json", None),
    ("run.json", ["--output_format", "xlsx,json"], "run.json", None),
])
def test_output_name_of_another_format_is_said(capsys: pytest.CaptureFixture, tmp_path: Path, name: str,
                                               flags: list, written: str, notice: str | None) -> None:
    """``-o run.json`` with the default format writes run.xlsx (as --help says), and a user who typed run.json
    looked for a JSON file that was never written, without a word."""
    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", str(tmp_path / name),
                         "--enable_profiling_compare", *flags)
    assert code == 0 and (tmp_path / written).is_file()
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if " names a ." in line]
    assert lines == ([notice.format(out=tmp_path)] if notice else [])


def test_gpu_flow_cat_with_npu_data_alone_is_said_to_be_ignored(capsys: pytest.CaptureFixture, samples: Path,
                                                                 tmp_path: Path) -> None:
    """--gpu_flow_cat names the flow category of GPU traces; given for two NPU inputs it changed nothing, without
    a word. With a GPU side it is used (and an absent category is its own warning), so no such line."""
    npu = str(samples / L1_TEXT)
    code, err = _analyze(capsys, "compare", "-bp", npu, "-d", npu, "-o", str(tmp_path), "--gpu_flow_cat", "ac2g",
                         "--enable_api_compare")
    assert code == 0
    assert [line.split("] ", 1)[1] for line in err.splitlines() if "--gpu_flow_cat" in line] == [
        "--gpu_flow_cat 'ac2g' is ignored: it names the flow category of GPU traces, and both inputs are NPU data "
        "(their ops and kernels are linked by the profiler's own flows)."]
    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    code, err = _analyze(capsys, "compare", "-bp", gpu, "-d", npu, "-o", str(tmp_path), "--gpu_flow_cat", "ac2g",
                         "--enable_api_compare")
    assert code == 0 and "is ignored" not in err


@pytest.mark.parametrize("name", ["report.json.gz", "report.xlsx.zip", "report.xlsm", "report.ods", "report.jsonl",
                                  "report.YAML"])
def test_output_name_of_a_compressed_or_other_report_file_is_said_to_be_a_folder(tmp_path: Path, name: str) -> None:
    """``-o report.json.gz`` (a compressed JSON report, as a trace can be) made a folder of that name holding the
    report, without the notice ``-o results.csv`` gets; an existing folder of the name is still the user's choice."""
    from msprof_compare.report.deliver import folder_notice

    target = str(tmp_path / name)
    assert folder_notice(target) == (f"-o {target} is taken as a folder (created) and the report goes into it: "
                                     "this run writes a workbook; end -o in .xlsx to name the file itself.")
    assert folder_notice(target, formats=("xlsx", "json")) == (
        f"-o {target} is taken as a folder (created) and the report goes into it: the reports are .xlsx and .json "
        "files; end -o in .xlsx or .json to name the file itself.")
    (tmp_path / name).mkdir()
    assert folder_notice(target) == ""
    assert folder_notice(str(tmp_path / "report.d")) == folder_notice(str(tmp_path / "run.2026")) == ""


def test_output_name_of_a_csv_file_is_said_to_be_a_folder(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Only .xlsx and .json name a report file: ``-o results.csv`` made a folder results.csv holding the
    workbook, without a word; an existing folder of such a name is the user's choice, so no notice then."""
    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    target = tmp_path / "results.csv"
    for _run in range(2):  # the second run finds the folder the first one made
        code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", str(target),
                             "--enable_api_compare")
        assert code == 0 and target.is_dir() and len(list(target.glob("*.xlsx"))) == _run + 1
        said = [line for line in err.splitlines() if "taken as a folder" in line]
        assert all("[WARNING] " in line for line in said), said  # a warning: not filtered out with the INFO lines
        lines = [line.split("] ", 1)[1] for line in said]
        assert lines == ([] if _run else [
            f"-o {target} is taken as a folder (created) and the report goes into it: this run writes a workbook; "
            "end -o in .xlsx to name the file itself."])


def test_a_csv_named_output_folder_notice_names_the_report_the_run_writes(capsys: pytest.CaptureFixture,
                                                                          tmp_path: Path) -> None:
    """``-o results.csv --output_format json`` was advised to "end -o in .xlsx or .json", and a default run the same:
    -o results.xlsx beside json, or results.json beside the default xlsx, then drew ``format_mismatch``'s warning that
    the report is written under the other name. The advice names the extension of the report the run writes (both
    where it writes both); the bundled pair writes its JSON report into the folder, and the name advised, pasted,
    draws no notice."""
    from msprof_compare.report.deliver import folder_notice, format_mismatch

    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    target = tmp_path / "results.csv"
    code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", str(target), "--enable_api_compare",
                         "--output_format", "json")
    assert code == 0 and len(list(target.glob("*.json"))) == 1 and not list(target.glob("*.xlsx")), err
    assert [line.split("][WARNING] ", 1)[1] for line in err.splitlines() if "taken as a folder" in line] == [
        f"-o {target} is taken as a folder (created) and the report goes into it: this run writes a JSON report; "
        "end -o in .json to name the file itself."]
    assert format_mismatch(str(tmp_path / "results.json"), ("json",), True) == ""
    assert format_mismatch(str(tmp_path / "results.xlsx"), ("json",), True) != ""  # what "or .xlsx" led to
    fresh = str(tmp_path / "other.csv")
    assert folder_notice(fresh, formats=("xlsx",)).endswith("this run writes a workbook; end -o in .xlsx to name the "
                                                            "file itself.")
    assert folder_notice(fresh, formats=("json", "xlsx")).endswith("the reports are .xlsx and .json files; end -o in "
                                                                   ".xlsx or .json to name the file itself.")


def _folder_runs(capsys: pytest.CaptureFixture, target: str, folder: Path) -> list[list[str]]:
    """Two runs of the bundled pair with ``-o target``, each checked to add one workbook to ``folder``: each run's
    "taken as a folder" notices (the first run makes the folder; the second finds it, the user's by then)."""
    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    said = []
    for run in range(2):
        code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", target, "--enable_api_compare")
        assert code == 0 and len(list(folder.glob("performance_comparison_result_*.xlsx"))) == run + 1, err
        said.append([line.split("][WARNING] ", 1)[1] for line in err.splitlines() if "taken as a folder" in line])
    return said


def test_a_report_name_with_a_trailing_slash_is_said_to_be_a_folder(capsys: pytest.CaptureFixture,
                                                                    tmp_path: Path) -> None:
    """``-o out/run.xlsx/`` made a folder named run.xlsx holding a timestamped workbook, without a word, where
    ``-o out/run.xlsx`` writes the file run.xlsx: the run now warns and names the path without the '/'. The second
    run finds the folder there (the user's now) and says nothing; ``run.json/`` alike, and the API's target too. A
    trailing '/' after another kind of name (``results.csv/``) asks for a folder and gets no notice."""
    from msprof_compare.report.deliver import api_folder_notice, folder_notice

    target = f"{tmp_path / 'run.xlsx'}/"
    assert _folder_runs(capsys, target, tmp_path / "run.xlsx") == [[
        f"-o {target} is taken as a folder (created) and the report goes into it: its trailing '/' makes it a "
        f"folder; write {tmp_path / 'run.xlsx'} without it to name the file itself."], []]
    json_target = f"{tmp_path / 'run.json'}//"
    assert folder_notice(json_target, formats=("json",)) == (
        f"-o {json_target} is taken as a folder (created) and the report goes into it: its trailing '/' makes it a "
        f"folder; write {tmp_path / 'run.json'} without it to name the file itself.")
    assert api_folder_notice(json_target, ".json") == (
        f"output {json_target} is taken as a folder (created) and the report goes into it: its trailing '/' makes it "
        f"a folder; write {tmp_path / 'run.json'} without it to name the file itself.")
    assert folder_notice(f"{tmp_path / 'results.csv'}/") == folder_notice(str(tmp_path) + "/") == ""
    # the report's own name without the '/' (not there yet) names the file: no folder, no notice
    assert folder_notice(str(tmp_path / "new.xlsx")) == folder_notice(str(tmp_path / "new.json")) == ""


def test_a_folder_named_as_a_report_extension_alone_gets_no_advice_to_drop_its_slash(capsys: pytest.CaptureFixture,
                                                                                     tmp_path: Path) -> None:
    """``-o .xlsx/`` (``..json/``) was told "write .xlsx without it to name the file itself", but ``-o .xlsx`` names
    no file and is refused: no such advice. The folder made is hidden (its name starts with a dot), where the
    reports went without a word (session 70): the notice says so and how to name the file; a folder of that name
    already there is the user's, and a run into it says nothing."""
    from msprof_compare.report.deliver import api_folder_notice, folder_notice

    for name, suffix in ((".xlsx", ".xlsx"), ("..json", ".json"), (". .JSON", ".json")):
        target = f"{tmp_path / name}/"
        assert folder_notice(target, formats=(suffix[1:],)) == (
            f"-o {target} is taken as a folder (created) named '{name}', hidden as its name starts with a dot, and "
            f"the report goes into it; give a name before the extension (run{suffix}) to name the report file "
            "itself.")
        assert api_folder_notice(target, suffix) == (
            f"output {target} is taken as a folder (created) named '{name}', hidden as its name starts with a dot, "
            f"and the report goes into it; give a name before {suffix} (run{suffix}) to name the report file itself.")
        assert "without it" not in folder_notice(target)
        code, err = _analyze(capsys, "compare", "-bp", "a", "-d", "b", "-o", str(tmp_path / name))
        assert code == 2 and "names no file before" in err  # what the advice led to
    target = f"{tmp_path / '.xlsx'}/"
    assert _folder_runs(capsys, target, tmp_path / ".xlsx") == [[
        f"-o {target} is taken as a folder (created) named '.xlsx', hidden as its name starts with a dot, and the "
        "report goes into it; give a name before the extension (run.xlsx) to name the report file itself."], []]
    assert folder_notice(f"{tmp_path / 'x.xlsx'}/").endswith(f"write {tmp_path / 'x.xlsx'} without it to name the "
                                                             "file itself.")


def _json_run_into_folder(capsys: pytest.CaptureFixture, target: str) -> list[str]:
    """The bundled pair compared with ``-o target --output_format json``, ``target`` ending in '/': one JSON report
    lands in that folder; the run's "taken as a folder" notices, without their log prefix."""
    repo = Path(__file__).resolve().parents[1]
    base, comparison = (str(repo / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    code, err = _analyze(capsys, "compare", "-bp", base, "-d", comparison, "-o", target, "--enable_api_compare",
                         "--output_format", "json")
    assert code == 0 and len(list(Path(target).glob("*.json"))) == 1, err
    return [line.split("][WARNING] ", 1)[1] for line in err.splitlines() if "taken as a folder" in line]


def test_a_hidden_extension_folder_notice_names_the_report_the_run_writes(capsys: pytest.CaptureFixture,
                                                                          tmp_path: Path) -> None:
    """``-o .xlsx/ --output_format json`` was advised to name the file run.xlsx, which the next run then warned is
    written as run.json (``format_mismatch``): the advice names run.json, the report that run writes, and
    ``..json/`` with the default xlsx names run.xlsx. Where the typed extension is a format of the run the line is
    as before. The bundled pair writes one JSON report into the hidden folder."""
    from msprof_compare.report.deliver import folder_notice, format_mismatch

    target = f"{tmp_path / '.xlsx'}/"
    assert _json_run_into_folder(capsys, target) == [
        f"-o {target} is taken as a folder (created) named '.xlsx', hidden as its name starts with a dot, and the "
        "report goes into it; give the report file a name with its extension (run.json: this run writes a JSON "
        "report) to name it itself."]
    # the name advised draws no notice of its own; the one advised before did
    assert format_mismatch(str(tmp_path / "run.json"), ("json",), True) == ""
    assert "so the report is written as" in format_mismatch(str(tmp_path / "run.xlsx"), ("json",), True)
    assert folder_notice(f"{tmp_path / '..json'}/").endswith(
        "give the report file a name with its extension (run.xlsx: this run writes a workbook) to name it itself.")
    assert folder_notice(f"{tmp_path / '..json'}/", formats=("xlsx", "json")).endswith(
        "give a name before the extension (run.json) to name the report file itself.")


def test_a_report_name_with_a_slash_is_advised_the_report_the_run_writes(capsys: pytest.CaptureFixture,
                                                                         tmp_path: Path) -> None:
    """``-o res.xlsx/ --output_format json`` was advised to "write res.xlsx without it", which the run then warned is
    written as res.json (``format_mismatch``), as ``.xlsx/`` was until session 71: the advice names res.json. The
    bundled pair writes its JSON report into the folder, and the name advised, pasted, draws no notice."""
    from msprof_compare.report.deliver import folder_notice, format_mismatch

    target = f"{tmp_path / 'res.xlsx'}/"
    assert _json_run_into_folder(capsys, target) == [
        f"-o {target} is taken as a folder (created) and the report goes into it: its trailing '/' makes it a "
        f"folder, and this run writes a JSON report: write {tmp_path / 'res.json'} to name the file itself."]
    assert format_mismatch(str(tmp_path / "res.json"), ("json",), True) == ""
    assert folder_notice(f"{tmp_path / 'res.JSON'}/").endswith(
        f"and this run writes a workbook: write {tmp_path / 'res.xlsx'} to name the file itself.")
    # a typed extension the run writes: the advice as before
    assert folder_notice(f"{tmp_path / 'res.json'}/", formats=("xlsx", "json")).endswith(
        f"its trailing '/' makes it a folder; write {tmp_path / 'res.json'} without it to name the file itself.")


def test_a_rank_by_rank_output_folder_notice_names_no_report_file(samples: Path, capsys: pytest.CaptureFixture,
                                                                   tmp_path: Path) -> None:
    """Two folders of ranks (msinsight's level-0 text export: rank0_ascend_pt, rank1_ascend_pt) are compared rank by
    rank, one report per rank into ``-o``'s folder, and an ``-o`` naming a report file is refused ("pass a folder
    for them"). The folder notices' advice to name the file ("give a name before the extension (run.xlsx)", "write
    x.xlsx without it", "end -o in .xlsx or .json") led to that refusal: the notice now names the folder alone."""
    ranks = str(samples / "msinsight/test/data/pytorch/text/level0")
    code, err = _analyze(capsys, "compare", "-bp", ranks, "-d", ranks, "-o", str(tmp_path / "run.xlsx"))
    assert code == 2 and "pass a folder for them" in err  # where the single compare's advice led
    hidden = f"{tmp_path / '.xlsx'}/"
    for target, folder, said in (
            (hidden, tmp_path / ".xlsx", f"-o {hidden} is taken as a folder (created) named '.xlsx', hidden as its "
             "name starts with a dot, and the rank reports go into it; give the folder a name that does not start "
             "with a dot to see it listed."),
            (f"{tmp_path / 'x.xlsx'}/", tmp_path / "x.xlsx", f"-o {tmp_path / 'x.xlsx'}/ is taken as a folder "
             "(created) and the rank reports go into it, one per rank."),
            (str(tmp_path / "results.csv"), tmp_path / "results.csv", f"-o {tmp_path / 'results.csv'} is taken as a "
             "folder (created) and the rank reports go into it, one per rank.")):
        code, err = _analyze(capsys, "compare", "-bp", ranks, "-d", ranks, "-o", target, "--enable_profiling_compare")
        assert code == 0, err
        assert [line.split("][WARNING] ", 1)[1] for line in err.splitlines() if "taken as a folder" in line] == [said]
        assert sorted(p.name.split("_2")[0] for p in folder.iterdir()) == [
            "performance_comparison_result_rank0", "performance_comparison_result_rank1",
            "performance_comparison_result_ranks"]


def test_an_output_name_with_a_blank_edge_is_warned_of(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o "out "`` (a stray blank of a copied command) made a folder ``out `` without a word, where an input path
    with such a blank gets a hint once it is missing: the run now warns, naming the name and its edge, before the
    folder is made; a second run into the folder that is there says nothing, and an inner blank is no edge. The
    API's ``to_json`` warns the same way."""

    from msprof_compare.api import compare
    from msprof_compare.report.deliver import api_folder_notice, folder_notice

    monkeypatch.chdir(tmp_path)
    repo = Path(__file__).resolve().parents[1]
    trace = str(repo / "sample_data" / "bert-small_h100.json.gz")
    warned = "-o 'out ': the name 'out ' ends with whitespace and is created so; leave the whitespace out if it was " \
             "not meant."
    for run in range(2):
        code, err = _analyze(capsys, "compare", "-bp", trace, "-d", trace, "-o", "out ", "--enable_api_compare",
                             "--output_format", "json")
        said = [line.split("][WARNING] ", 1)[1] for line in err.splitlines() if "whitespace" in line]
        assert code == 0 and said == ([] if run else [warned]), err
        assert len(list((tmp_path / "out ").glob("*.json"))) == run + 1
    assert folder_notice(" a/b.xlsx") == ("-o ' a/b.xlsx': the name ' a' starts with whitespace and is created so; "
                                          "leave the whitespace out if it was not meant.")
    assert folder_notice("out / run.xlsx ") == ("-o 'out / run.xlsx ': the name ' run.xlsx ' starts and ends with "
                                                "whitespace and is created so; leave the whitespace out if it was "
                                                "not meant.")  # "out " is there
    assert folder_notice("my out") == folder_notice("out") == folder_notice("-") == ""
    assert api_folder_notice(b"new ", ".json") == ("output 'new ': the name 'new ' ends with whitespace and is "
                                                    "created so; leave the whitespace out if it was not meant.")
    result = compare(trace, trace, enable_api_compare=True)
    with messages_logged() as seen:
        written = result.to_json(" run.json")
    assert Path(written) == tmp_path / " run.json"
    assert [m for m in seen if "whitespace" in m] == [
        "output ' run.json': the name ' run.json' starts with whitespace and is created so; leave the whitespace "
        "out if it was not meant."]


def test_a_self_compare_says_each_info_notice_once(caplog: pytest.LogCaptureFixture) -> None:
    """A run without --enable_* flags logs a side's "Can't find any memory event" notice at INFO (the user did
    not ask for that comparison): the said-once filter let INFO through, so a self-compare of the NPU excerpt
    (no operator_memory.csv) printed it twice, word for word (found by the sample sweep). Said once now, like
    the warnings; the next compare says it again."""
    import logging

    from msprof_compare.api import compare

    npu = str(DATA / "npu" / "rank0_ascend_pt")

    def notices() -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            compare(npu, npu)
        return [m for m in caplog.messages if m.startswith("Can't find any memory event")]

    said = notices()
    assert said == [f"Can't find any memory event in the file: {npu} (both sides: the export has no "
                    "operator_memory.csv)"]
    assert len(caplog.messages) == len(set(caplog.messages)), caplog.messages
    assert notices() == said


def test_no_e2e_notice_names_a_self_compared_input_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A lone CANN lane file (an Ascend Hardware lane and no Overlap Analysis lane, as mindinsight's
    task_time_0_2_1.json: here its first two events, a task's name made up) has no E2E time; compared with
    itself, the notice named the one input twice ("No E2E time in X and X", found by the sample sweep)."""
    import logging

    from msprof_compare.api import compare

    lane = tmp_path / "task_time_0_2_1.json"
    lane.write_text(json.dumps([
        {"name": "process_name", "pid": 3, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
        {"name": "MatMul", "pid": 3, "tid": 2, "ts": "1000.5", "dur": 2.5, "ph": "X", "args": {}}]))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(lane), str(lane), enable_profiling_compare=True)
    assert [m for m in caplog.messages if m.startswith("No E2E time")] == [
        f"No E2E time in {lane}: OverallMetrics and the Summary sheet are left out"]


def test_a_folder_of_cann_runs_names_them_and_a_file_to_pass(samples: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    """MindInsight's profiler folder holds two CANN runs (PROF_* folders): it was refused as holding nothing
    parsed, without a word of what to pass. The hint names the runs, says one is chosen, and gives a timeline
    file that compares given alone; a folder with one run names that run's files. Every path starts with the
    folder as typed, so that it works pasted back (left69c: they were paths from the folder given)."""
    from msprof_compare.loaders import detect

    folder = samples / "mindinsight/tests/utils/resource/profiler"
    if not folder.is_dir():
        pytest.skip("mindinsight sample absent")
    first, second = "PROF_000001_20230818142704322_COJGGGCANRMICFBC", "PROF_000001_20230818142704567_GQFAMHBKGODKJMLA"
    assert sorted(p.name for p in folder.iterdir()) == [first, second]
    example = folder / first / "device_0" / "timeline" / "msprof_0_2_1.json"
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-d", str(folder), "-bp", str(folder), "-o", str(tmp_path / "never")])
    err = capsys.readouterr().err
    assert info.value.code == 1 and [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: {folder}: The data is not collected by PyTorch or Mindspore mode or the data is not parsed: no "
        f"trace_view.json, profiler *.db or *.pt.trace.json found (both sides: it holds 2 CANN PROF_* folders: "
        f"{folder / first}, "
        f"{folder / second}; choose one and pass one of its timeline files, such as {example})"]
    assert detect(str(example)).trace_path == str(example)  # the file named is taken
    one = tmp_path / "one_run"
    shutil.copytree(folder / second, one / second)
    (one / "PROF_empty").mkdir()  # a run without timeline files is not offered
    with pytest.raises(ProfileError) as refused:
        detect(str(one))
    files = [one / second / "device_1" / "timeline" / f"msprof_1_0_{i}.json" for i in (1, 2)]
    assert refused.value.hint == f"it holds timeline files: {files[0]}, {files[1]}; pass one of them"


def test_only_two_neighbours_swapped_both_ways_are_a_swap() -> None:
    """``options.neighbours_swapped``: "hepx" differs from "help" in two neighbouring letters, but only one of them
    is the other's (p for l; x is no p), and difflib's ratio is 0.75 (3 of 4 letters), so --help is not named;
    "hlep" is help with l and e swapped."""
    from msprof_compare.options import close_names

    flags = {"--help", "--base_step", "--comparison_step"}
    assert close_names("--hepx", flags) == []
    assert close_names("--hlep", flags) == ["--help"]


def test_a_group_run_names_no_compare_option(capsys: pytest.CaptureFixture) -> None:
    """The group's own unknown option is not matched against compare's: "-pb" before any sub-command gets no
    "-bp", which is compare's alone."""
    assert _analyze(capsys, "-pb", "x") == (2, "error: No such option: -pb (see 'msprof-analyze --help')\n")


@pytest.mark.parametrize(("typed", "near"), [("--hlep", "--help"), ("--verison", "--version"), ("--stpe", "")])
def test_a_group_option_typo_names_the_group_option_meant(capsys: pytest.CaptureFixture, typed: str,
                                                          near: str) -> None:
    """Before any sub-command the group's own options are the ones a typo may mean: "msprof-analyze --hlep" named
    nothing (the names were compare's alone, and no compare was run), where a user wants --help."""
    said = f" (Possible options: {near})" if near else ""
    assert _analyze(capsys, typed) == (2, f"error: No such option: {typed}{said} (see 'msprof-analyze --help')\n")


def test_a_bare_group_run_names_the_command_to_type(capsys: pytest.CaptureFixture) -> None:
    """``msprof-analyze`` alone said "Missing command." and no more: the line names the one command and its usage,
    exit 2, as the unknown sub-command's line names 'compare'; one sentence ("[options]). (see ..." ended it twice);
    under the face it was run by."""
    assert _analyze(capsys) == (2, "error: Missing command: the one command is 'compare': msprof-analyze compare -d "
                                   "COMPARISON -bp BASE [options] (see 'msprof-analyze --help')\n")
    # each face names itself: python -m msprof_compare, whose scripts directory may not be on PATH
    face = "python -m msprof_compare"
    with pytest.raises(SystemExit) as info:
        cli.analyze_main([], prog=face)
    assert (info.value.code, capsys.readouterr().err) == (
        2, f"error: Missing command: the one command is 'compare': {face} compare -d COMPARISON -bp BASE [options] "
           f"(see '{face} --help')\n")


def test_a_short_option_cluster_of_other_characters_is_named_as_click_names_it(capsys: pytest.CaptureFixture) -> None:
    """Only letters and digits after the dash are taken as a cluster typed: "-p=1" is named as click names it,
    its first letter."""
    code, err = _analyze(capsys, "compare", "-d", "a", "-bp", "b", "-p=1")
    assert (code, err) == (2, "error: No such option: -p (see 'msprof-analyze compare --help')\n")


def test_a_utf16_trace_in_a_folder_with_a_space_gets_a_command_that_runs(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    """The conversion's path is quoted for the shell: a trace under "my runs/" (a space, as a folder named by
    hand often has) given unquoted made iconv read "my" and "runs/t.pt.trace.json" and the '>' write a file "my".
    The hint's command, run as given, converts the file in place, after which the trace loads (kills t_quote).
    Input: the timesformer excerpt, re-encoded as UTF-16 with its byte-order mark."""
    text = (DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8")
    (tmp_path / "my runs").mkdir()
    trace = tmp_path / "my runs" / "t.pt.trace.json"
    trace.write_bytes(text.encode("utf-16"))
    params = {"base_profiling_path": str(trace), "comparison_profiling_path": str(trace),
              "output_path": str(tmp_path / "out"), "enable_profiling_compare": True}
    (tmp_path / "out").mkdir()
    assert cli.execute(params) == 1
    q = f"'{trace}'"  # a POSIX shell's single quotes: the path holds no quote of its own
    command = f"iconv -f UTF-16 -t UTF-8 {q} > {q}.utf8 && mv {q}.utf8 {q}"
    assert f"(both sides: use the file the profiler wrote, or convert it: {command})" in capsys.readouterr().err
    _run_hint(command, trace, "utf-16")
    assert cli.execute(params) == 0


def test_a_utf16_profiler_info_is_said_with_its_side_then_the_conversion(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    """profiler_info.json re-saved as UTF-16: the original's "Failed to read profiler_info.json" warning after
    the file's path, its side, then the conversion, as profiler_metadata.json's line has them. The conversion was
    the side's aside, "(both sides: use the file ... && mv F.utf8 F)": the command ended in the side's ')', which
    broke it when copied to the line's end. Run as given, it gives back a folder whose profiler_info reads without
    a word (kills a_info_hint, which dropped the conversion). Input: the torch_npu excerpt, its
    profiler_info_0.json re-encoded."""
    info, params = _excerpt_with(tmp_path, "profiler_info_0.json")
    assert cli.execute(params) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if str(info) in line]
    command = f"iconv -f UTF-16 -t UTF-8 {info} > {info}.utf8 && mv {info}.utf8 {info}"
    assert len(said) == 1 and "[WARNING]" in said[0]
    assert f"] Failed to read profiler_info.json: {info}: UTF-16 text (it starts with a UTF-16 byte-order mark" \
        in said[0]
    assert said[0].endswith(f" (both sides); use the file the profiler wrote, or convert it: {command}")
    _run_hint(command, info, "utf-16")
    shutil.rmtree(tmp_path / "out")
    (tmp_path / "out").mkdir()
    assert cli.execute(params) == 0
    assert str(info) not in capsys.readouterr().err


def test_a_report_name_in_capitals_with_a_trailing_slash_is_said_to_be_a_folder(capsys: pytest.CaptureFixture,
                                                                                tmp_path: Path) -> None:
    """The report's extension is matched in any case: ``-o RUN.XLSX`` writes the workbook file RUN.XLSX, so
    ``-o RUN.XLSX/`` gets the notice ``-o run.xlsx/`` gets (kills d_lower, which matched '.xlsx' in lower case
    alone and made the folder without a word). Input: the timesformer excerpt against itself."""
    from msprof_compare.report.deliver import folder_notice

    trace = str(DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json")
    code, _ = _analyze(capsys, "compare", "-bp", trace, "-d", trace, "-o", str(tmp_path / "RUN.XLSX"))
    assert code == 0 and (tmp_path / "RUN.XLSX").is_file()
    target = f"{tmp_path / 'RUN.XLSX'}/"
    assert folder_notice(target) == (
        f"-o {target} is taken as a folder (created) and the report goes into it: its trailing '/' makes it a "
        f"folder; write {tmp_path / 'RUN.XLSX'} without it to name the file itself.")
