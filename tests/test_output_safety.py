"""Output safety, end to end through the real CLI (tests/test_excel.py covers the writer's units).

* a process killed or interrupted mid-write leaves no workbook under the final name;
* no text from a profile becomes a spreadsheet formula;
* an existing result file is never replaced;
* a bad ``-o`` (a file, a symbolic link, unwritable) is refused with one clear line, exit 2;
* a missing ``-o`` directory is created with mode 0o750.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import openpyxl
import pytest
from cliutil import error_lines, finish, signal_mid_write, slow_writer_child
from test_bad_corpus import run_cli

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(__file__).resolve().parent / "data" / "bad" / "_src"
RESULT_GLOB = "performance_comparison_result_*.xlsx"


@pytest.fixture
def kineto() -> Path:
    p = SRC / "kineto.json"
    if not p.is_file():
        pytest.skip("corpus sources missing (run tools/make_bad_corpus.py)")
    return p


def _env(**extra: str) -> dict:
    env = dict(os.environ, MSPROF_ANALYZE_LOG_LEVEL="WARNING", **extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# A child that runs the CLI with a slow sheet writer and announces when writing has started.
_SLOW_CHILD = slow_writer_child("msprof_compare.cli:compare_main")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL, signal.SIGTERM, getattr(signal, "SIGHUP", 1)])
def test_killed_mid_write_leaves_no_workbook(sig: int, kineto: Path, tmp_path: Path) -> None:
    """A signal while the workbook is written leaves no workbook; a handled one ends the run with its status and
    one line (SIGTERM / SIGHUP ended it with 143 / 129 without a word: the shell says nothing of a process that
    exits, so a CI log stopped there)."""
    from msprof_compare.report import excel

    if not hasattr(excel, "_write_sheet"):
        pytest.skip("writer has no _write_sheet hook")
    out, marker = tmp_path / "out", tmp_path / "writing"
    code, err = signal_mid_write(_SLOW_CHILD, marker, ["-bp", str(kineto), "-d", str(kineto), "-o", str(out)],
                                 _env(), sig)
    assert code != 0
    if sig != signal.SIGKILL:  # handled: the temporary file and the folder the run made go too
        assert not out.exists(), sorted(p.name for p in out.iterdir())
        assert "Traceback" not in err
        said = "interrupted" if sig == signal.SIGINT else f"terminated ({signal.Signals(sig).name})"
        assert (code, error_lines(err)) == (130 if sig == signal.SIGINT else 128 + sig, [f"error: {said}"])
    else:  # an uncatchable kill can only leave the hidden temporary folder, never a result-named file
        assert list(out.glob(RESULT_GLOB)) == [], "a workbook appeared under the final name"
        left = sorted(p.name for p in out.iterdir())
        assert left and all(n.startswith(".") for n in left), left


# A child whose workbook file fills the disk after ``limit`` bytes: writes, and from then on every
# flush / seek / close, fail with ENOSPC, as on a full file system.
_FULL_DISK_CHILD = r"""
import errno, sys
from msprof_compare.report import excel
limit, rows = int(sys.argv[1]), int(sys.argv[2])
if rows:
    excel.CONSTANT_MEMORY_ROWS = rows  # the streaming writer of huge sheets, on a small input
class Full:
    def __init__(self, path, mode):
        self.fh, self.n, self.full = open(path, mode), 0, False
    def _check(self):
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
    def write(self, data):
        self._check()
        if self.n + len(data) > limit:
            self.full = True
            self._check()
        self.n += len(data)
        return self.fh.write(data)
    def seek(self, *a):
        self._check()
        return self.fh.seek(*a)
    def tell(self):
        return self.fh.tell()
    def flush(self):
        self._check()
    def close(self):
        self.fh.close()
        self._check()
excel.open = Full
from msprof_compare.cli import compare_main
sys.argv = ["msprof-compare"] + sys.argv[3:]
compare_main()
"""


@pytest.mark.parametrize("streaming", [False, True], ids=["in_memory", "constant_memory"])
@pytest.mark.parametrize("limit", [0, 3000])
def test_disk_full_while_writing(limit: int, streaming: bool, kineto: Path, tmp_path: Path) -> None:
    """One error line naming the directory and the OS reason, exit 1, nothing left behind: no result,
    no temporary file, no scratch directory, and no 'Exception ignored' noise from the zip writer."""
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    out.mkdir()
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-c", _FULL_DISK_CHILD, str(limit), "10" if streaming else "0",
                           "-bp", str(kineto), "-d", str(kineto), "-o", str(out)],
                          env=_env(TMPDIR=str(scratch)), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("[")]
    assert lines == [f"error: {out}: cannot write the workbook: No space left on device"], proc.stderr
    assert sorted(os.listdir(out)) == [] and sorted(os.listdir(scratch)) == []


def _statvfs(avail: int, free: int):
    """``os.statvfs`` of a file system of 1,000 blocks with ``avail`` of them free to anyone and ``free`` to root."""
    real = os.statvfs

    def fake(path):
        st = real(path)
        return os.statvfs_result((st.f_bsize, st.f_frsize, 1000, free, avail, *st[5:]))
    return fake


@pytest.mark.parametrize(("target", "held"), [("out", ""), ("new/deeper", "{tmp}")], ids=["existing", "missing"])
def test_a_full_disk_is_found_before_the_compare(target: str, held: str, kineto: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system with no free block: the run stopped only when the report was written, after the whole
    compare (exit 1). One statvfs before the compare says so (exit 2), nothing loaded, nothing written; a missing
    -o is judged by the nearest existing folder above it. The late check stays for a disk that fills meanwhile
    (test_disk_full_while_writing)."""
    from cliutil import run_inproc

    from msprof_compare import api

    (tmp_path / "out").mkdir()
    out = tmp_path / target
    monkeypatch.setattr(os, "statvfs", _statvfs(0, 0))
    monkeypatch.setattr(api, "cli_compare", lambda *a, **k: pytest.fail("compared on a full disk"))
    code, stdout, err = run_inproc(capsys, "-bp", str(kineto), "-d", str(kineto), "-o", str(out))
    near = f" (its nearest existing folder, {tmp_path})" if held else ""
    assert (code, stdout, error_lines(err)) == (2, "", [
        f"error: output directory {out}{near}: no space left on its file system (0 bytes free); free some space or "
        "write the reports elsewhere"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("given", "named"), [
    ([], "{cwd} (the current directory)"), (["-o", ""], "{cwd} (the current directory)"),
    (["-o", "out"], "out"), (["-o", "out/"], "out/"),
    (["-o", "out/run.xlsx"], "out ({cwd}/out, the folder of out/run.xlsx)"),
    (["-o", "run.json"], "{cwd} (the current directory, the folder of run.json)"),
    (["-o", "-", "--output_format", "xlsx,json"], "{cwd} (the current directory)")],
    ids=["default", "empty", "folder", "folder-slash", "report-file", "json-file", "stdout-and-workbook"])
def test_a_full_disk_names_the_output_as_typed(given: list[str], named: str, kineto: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full-disk refusal named the folder by its absolute path alone, where every other -o message names -o as
    typed (README, "Errors and exit codes"): a folder as typed, a report file's folder as typed too, its absolute
    path and the name typed after it, the current directory as such (no -o, an empty one, or the workbook of -o -
    beside the JSON)."""
    from cliutil import run_inproc

    from msprof_compare import api

    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    monkeypatch.setattr(os, "statvfs", _statvfs(0, 0))
    monkeypatch.setattr(api, "cli_compare", lambda *a, **k: pytest.fail("compared on a full disk"))
    code, _, err = run_inproc(capsys, "-bp", str(kineto), "-d", str(kineto), *given)
    assert (code, error_lines(err)) == (2, [
        f"error: output directory {named.format(cwd=tmp_path)}: no space left on its file system (0 bytes free); "
        "free some space or write the reports elsewhere"])


def test_blocks_reserved_for_root_are_room_for_root_alone(kineto: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """No block free to users but some reserved for root (ext4's 5 %): root may write them, anyone else not."""
    from cliutil import run_inproc

    from msprof_compare.errors import UsageError
    from msprof_compare.report.deliver import check_target

    euid = os.geteuid
    monkeypatch.setattr(os, "statvfs", _statvfs(0, 50))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    check_target(str(tmp_path))  # root: room
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match=r"no space left on its file system \(0 bytes free\)"):
        check_target(str(tmp_path))
    monkeypatch.setattr(os, "statvfs", _statvfs(1, 50))
    check_target(str(tmp_path))  # one block free: the write is left to find out
    monkeypatch.setattr(os, "geteuid", euid)  # the inputs' owner checks judge the real user
    assert run_inproc(capsys, "-bp", str(kineto), "-d", str(kineto), "--enable_api_compare",
                      "-o", str(tmp_path))[0] == 0


def test_a_file_system_that_counts_no_blocks_is_left_to_the_probe(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """statvfs of a file system that counts no blocks at all (procfs, some FUSE mounts: f_blocks 0, so 0 free)
    says nothing of its room: no "no space left" refusal there; the write probe judges such a folder."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report.output import check_room

    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda p: os.statvfs_result((*real(p)[:2], 0, 0, 0, *real(p)[5:])))
    check_room(str(tmp_path), str(tmp_path))  # no UsageError
    monkeypatch.setattr(os, "statvfs", _statvfs(0, 0))  # the same with 1,000 blocks: refused
    with pytest.raises(UsageError, match="no space left on its file system"):
        check_room(str(tmp_path), str(tmp_path))


def test_stale_temporaries_of_killed_runs_are_removed(kineto: Path, tmp_path: Path) -> None:
    """What a SIGKILL leaves (a hidden temporary report) goes away on a later run once a day old;
    a fresh one (a run writing right now) and other files are left alone."""
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".performance_comparison_result_abc123.xlsx.tmp"
    fresh = out / ".performance_comparison_result_def456.xlsx.tmp"  # two hours old: maybe a long run writing
    other = out / ".notes.tmp"
    parts = out / ".performance_comparison_result_x1y2.parts.tmp"  # a huge workbook's part files
    parts.mkdir()
    (parts / "sheet1.xml").write_bytes(b"<partial")
    for f in (stale, fresh, other):
        f.write_bytes(b"partial")
    old = time.time() - 2 * 24 * 3600
    for f in (stale, other, parts):
        os.utime(f, (old, old))
    os.utime(fresh, (time.time() - 7200, time.time() - 7200))
    code, _out, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(out)])
    assert code == 0, err
    assert not stale.exists() and not parts.exists() and fresh.exists() and other.exists()
    assert len(list(out.glob(RESULT_GLOB))) == 1


def _trace_with_names(base: Path, names: list[str]) -> bytes:
    doc = json.loads(base.read_bytes())
    events = doc["traceEvents"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    for e, n in zip(ops + kernels, names * 4, strict=False):
        e["name"] = n
    return json.dumps(doc).encode()


NASTY = ["=1+1", "+SUM(A1:A2)", "-2+3", "@SUM(A1)", "\t=cmd|' /C calc'!A0", "\r=1",
         '=HYPERLINK("http://x","y")', "=cmd|'/C calc'!A0"]


def test_profile_text_never_becomes_a_formula(kineto: Path, tmp_path: Path) -> None:
    base, comp = tmp_path / "=base.pt.trace.json", tmp_path / "+comp.pt.trace.json"
    base.write_bytes(_trace_with_names(kineto, NASTY))
    comp.write_bytes(_trace_with_names(kineto, list(reversed(NASTY))))
    out = tmp_path / "out"
    code, _, err = run_cli(["-bp", str(base), "-d", str(comp), "-o", str(out)])
    assert code == 0, err
    [book] = list(out.glob(RESULT_GLOB))
    wb = openpyxl.load_workbook(book)
    seen: set[str] = set()
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (ws.title, cell.coordinate, cell.value)
                if isinstance(cell.value, str):
                    seen.add(cell.value.replace("_x000D_", "\r"))
    assert any(n in seen for n in NASTY), "the nasty names should reach some sheet as text"


def test_existing_results_are_never_replaced(kineto: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    now = datetime.now(timezone.utc)
    taken = {}
    for s in range(-2, 30):  # every name the run could pick in the next half minute
        name = f"performance_comparison_result_{(now + timedelta(seconds=s)).strftime('%Y%m%d%H%M%S')}.xlsx"
        (out / name).write_bytes(b"precious " + name.encode())
        taken[name] = (out / name).read_bytes()
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(out)])
    assert code == 0, err
    for name, data in taken.items():
        assert (out / name).read_bytes() == data
    new = sorted(set(p.name for p in out.iterdir()) - set(taken))
    assert len(new) == 1 and new[0].endswith(".xlsx"), new


def test_reports_of_one_run_keep_one_name_under_a_concurrent_run(kineto: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Another run publishing r.json between our r.xlsx and our r.json: our pair moves to r_1 together
    (it was r.xlsx + r_1.json, next to the other run's r.json), and the other run's file is untouched."""
    from msprof_compare import api
    from msprof_compare.report import deliver, output

    result = api.compare(str(kineto), str(kineto), enable_profiling_compare=True, output_format="xlsx,json")
    out = tmp_path / "out"
    real_link = os.link

    def racing_link(src: str, dst: str) -> None:
        if dst == str(out / "r.json") and not os.path.exists(dst):
            Path(dst).write_text("the other run's report")
        real_link(src, dst)

    monkeypatch.setattr(output.os, "link", racing_link)
    written = deliver.write_reports(result, str(out / "r.xlsx"))
    assert [Path(p).name for p in written] == ["r_1.xlsx", "r_1.json"]
    assert sorted(p.name for p in out.iterdir()) == ["r.json", "r_1.json", "r_1.xlsx"]
    assert (out / "r.json").read_text() == "the other run's report"
    assert json.loads((out / "r_1.json").read_text())["base"]["path"] == str(kineto)


def test_report_set_without_hard_links(kineto: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FAT / exFAT / some network mounts have no hard links: names are reserved with an exclusive create and
    the files moved onto them; a set whose JSON name is taken moves back and takes the next free name (it
    deleted its own workbook and failed)."""
    import errno

    from msprof_compare import api
    from msprof_compare.report import deliver, output

    def no_links(src: str, dst: str) -> None:
        raise OSError(errno.EINVAL, "hard links not supported")

    result = api.compare(str(kineto), str(kineto), enable_profiling_compare=True, output_format="xlsx,json")
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.json").write_text("another run's report")
    monkeypatch.setattr(output.os, "link", no_links)
    written = deliver.write_reports(result, str(out / "r.xlsx"))
    assert [Path(p).name for p in written] == ["r_1.xlsx", "r_1.json"]
    assert sorted(p.name for p in out.iterdir()) == ["r.json", "r_1.json", "r_1.xlsx"]  # no temporaries left
    assert (out / "r.json").read_text() == "another run's report"
    assert openpyxl.load_workbook(out / "r_1.xlsx").sheetnames[0] == "Summary"
    assert json.loads((out / "r_1.json").read_text())["base"]["path"] == str(kineto)
    assert stat.S_IMODE((out / "r_1.xlsx").stat().st_mode) == 0o640


def test_failed_move_without_hard_links_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The move onto a reserved name fails (I/O error, a file held open on Windows): neither the empty
    reservation nor the other file of the set stays behind."""
    import errno

    from msprof_compare.errors import ProfileError
    from msprof_compare.report import output

    def no_links(src: str, dst: str) -> None:
        raise OSError(errno.EINVAL, "hard links not supported")

    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if dst.endswith(".json"):
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(output.os, "link", no_links)
    monkeypatch.setattr(output.os, "replace", failing_replace)

    def fill(tmp: str) -> None:
        Path(tmp).write_text("{}")

    for parts in ([(".xlsx", fill, "workbook"), (".json", fill, "JSON result")], [(".json", fill, "JSON result")]):
        out = tmp_path / str(len(parts))
        out.mkdir()
        with pytest.raises(ProfileError, match="Input/output error"):
            output.write_new_files(str(out), "r", parts)
        assert list(out.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_reports_are_rendered_in_a_private_folder(tmp_path: Path) -> None:
    """The reports are rendered in a folder of the output directory only this user can enter (0700), gone
    afterwards."""
    from msprof_compare.report import output

    seen: list[tuple[Path, int]] = []

    def fill(tmp: str) -> None:
        seen.append((Path(tmp).parent, stat.S_IMODE(os.stat(os.path.dirname(tmp)).st_mode)))
        Path(tmp).write_text("x")

    paths = output.write_new_files(str(tmp_path), "r", [(".xlsx", fill, "workbook"), (".json", fill, "JSON result")])
    assert [Path(p).name for p in paths] == ["r.xlsx", "r.json"]
    (private, mode), (private2, _) = seen
    assert private == private2 and private.parent == tmp_path and mode == 0o700
    assert private.name.startswith(".performance_comparison_result_") and not private.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_shared_output_directory_without_sticky_bit_is_refused(tmp_path: Path) -> None:
    """In a directory every user may write to without the sticky bit, anyone can rename our temporary folder
    and put a link (or a folder of ours) in its place while the report is written, making this run write or
    delete a file of their choosing (an audit did, 144 times in 300 races). Such a directory is refused before
    loading unless --force; a sticky one (/tmp) is fine, and so is a group-writable one (a umask of 002 makes
    every folder so, for a group of one; the original refuses those too)."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    for mode, ok in ((0o777, False), (0o757, False), (0o2777, False), (0o1777, True), (0o3777, True),
                     (0o775, True), (0o2775, True), (0o755, True), (0o700, True)):
        d = tmp_path / f"m{mode:o}"
        d.mkdir()
        d.chmod(mode)
        if ok:
            assert output.output_target(str(d), ".xlsx") == (str(d), None)
        else:
            with pytest.raises(UsageError, match=r"can be written by every user and has no sticky bit"):
                output.output_target(str(d), ".xlsx")
            assert output.output_target(str(d), ".xlsx", force=True) == (str(d), None)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_refused_current_directory_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture) -> None:
    """Without -o the report goes into the current directory; a refusal read "output directory . can be written by
    every user ..." (or "... . is not writable"), naming a folder the user never typed. It names the folder."""
    from cliutil import run_inproc

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.chdir(shared)
    sample = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
    for extra in ([], ["-o", "."], ["-o", "./"]):
        code, _out, err = run_inproc(capsys, "-d", str(sample), "-bp", str(sample), *extra)
        assert code == 2, err
        assert [line for line in err.splitlines() if line.startswith("error:")] == [
            f"error: output directory {shared} (the current directory) can be written by every user and has no "
            "sticky bit: anyone could swap files in it while the report is written (use a directory of your own, "
            "or --force)"], err
    assert list(shared.iterdir()) == []


def test_stale_cleanup_leaves_other_users_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A day-old entry named as our temporary folder is removed only when it belongs to this user: another
    user could rename a victim's folder to that name and have a later run (root) delete it."""
    from msprof_compare.report import output

    old = tmp_path / ".performance_comparison_result_x.tmp"
    (old / "notes").mkdir(parents=True)
    (old / "notes" / "thesis.tex").write_text("precious")
    past = time.time() - 2 * output.STALE_TMP_SECONDS
    os.utime(old, (past, past))
    if hasattr(os, "geteuid"):
        me = os.geteuid()
        monkeypatch.setattr(output.os, "geteuid", lambda: me + 1)
        assert output.remove_stale_temporaries(str(tmp_path)) == 0 and old.exists()
        monkeypatch.undo()
    assert output.remove_stale_temporaries(str(tmp_path)) == 1 and not old.exists()


def test_reports_are_on_disk_before_their_names_appear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file is flushed (fsync) before it is published, and the directory after: without it a power loss
    could leave a final name holding an empty report, and a delayed write error went unreported (exit 0). A
    failing flush is the write's error: one line, nothing published."""
    import errno

    from msprof_compare.errors import ProfileError
    from msprof_compare.report import output

    events: list[str] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd: int) -> None:
        events.append("sync " + os.path.basename(os.readlink(f"/proc/self/fd/{fd}")) if os.path.exists("/proc")
                      else "sync")
        real_fsync(fd)

    def link(src: str, dst: str) -> None:
        events.append("link " + os.path.basename(dst))
        real_link(src, dst)

    monkeypatch.setattr(output.os, "fsync", fsync)
    monkeypatch.setattr(output.os, "link", link)

    def fill(tmp: str) -> None:
        Path(tmp).write_text("x")

    output.write_new_files(str(tmp_path), "r", [(".xlsx", fill, "workbook"), (".json", fill, "JSON result")])
    if os.path.exists("/proc"):
        assert events == ["sync report.xlsx", "sync report.json", "link r.xlsx", "link r.json",
                          f"sync {tmp_path.name}"]
    else:
        assert events.index("link r.xlsx") == 2 and events.count("sync") >= 2

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(output.os, "fsync", failing)
    out = tmp_path / "new" / "dir"
    with pytest.raises(ProfileError, match=r"cannot write the workbook: Input/output error"):
        output.write_new_file(str(out), "r.xlsx", fill, "workbook")
    assert not (tmp_path / "new").exists()  # the folders this run made are gone again


def test_failed_write_removes_the_folders_it_made(tmp_path: Path) -> None:
    """-o names a folder that does not exist: it is made for the report, and removed again when the report
    cannot be written (a full disk), so a failed run leaves nothing behind; a folder that existed stays."""
    import errno

    from msprof_compare.errors import ProfileError
    from msprof_compare.report import output

    def full(tmp: str) -> None:
        Path(tmp).write_text("x")
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "kept").mkdir()
    for target in (tmp_path / "a" / "b" / "c", tmp_path / "kept" / "d", tmp_path / "kept"):
        with pytest.raises(ProfileError, match="No space left on device"):
            output.write_new_file(str(target), "r.xlsx", full, "workbook")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"] and list((tmp_path / "kept").iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_signal_while_publishing_a_set_waits_for_the_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM arriving between the two files of a set is held until the set is complete: the run then
    ends (SystemExit from the write guard) with both files published and no temporary left, never half."""
    from msprof_compare.report import output

    real_link = os.link

    def link_then_sigterm(src: str, dst: str) -> None:
        real_link(src, dst)
        if dst.endswith(".xlsx"):
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(output.os, "link", link_then_sigterm)

    def fill(tmp: str) -> None:
        Path(tmp).write_text("x")

    with pytest.raises(SystemExit):
        output.write_new_files(str(tmp_path), "r", [(".xlsx", fill, "workbook"), (".json", fill, "JSON result")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.xlsx"]


def test_closed_pipe_on_windows_is_einval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows often reports a write to a closed pipe (``| head``) as EINVAL, not EPIPE (CPython issue 79935)."""
    import errno

    from msprof_compare.report import output

    assert output.closed_pipe(BrokenPipeError())
    assert not output.closed_pipe(OSError(errno.EINVAL, "Invalid argument"))
    monkeypatch.setattr(output.os, "name", "nt")
    assert output.closed_pipe(OSError(errno.EINVAL, "Invalid argument"))
    assert not output.closed_pipe(OSError(errno.ENOSPC, "No space left on device"))


def _one_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_output_path_that_is_a_file(kineto: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("keep")
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(target)])
    assert code == 2
    assert str(target) in _one_error(err) or target.name in _one_error(err)
    assert target.read_text() == "keep"


def test_output_path_that_is_a_symlink(kineto: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(link)])
    assert code == 2
    assert "link" in _one_error(err)
    assert list(real.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_output_path_not_writable(kineto: Path, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(locked)])
    assert code == 2
    assert "locked" in _one_error(err)


def test_output_checked_before_loading(tmp_path: Path) -> None:
    """A bad -o fails fast, even when the inputs are huge or bad: no load is wasted."""
    target = tmp_path / "file"
    target.write_text("x")
    code, _, err = run_cli(["-bp", str(tmp_path / "missing.json"), "-d", str(tmp_path / "missing.json"),
                            "-o", str(target)])
    assert code == 2, err


def test_missing_output_directory_is_created_0750(kineto: Path, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    old = os.umask(0o022)
    try:
        code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(out)])
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(out.parent.stat().st_mode) == 0o750  # parents too
    [book] = list(out.glob(RESULT_GLOB))
    assert stat.S_IMODE(book.stat().st_mode) == 0o640
    assert [p.name for p in out.iterdir()] == [book.name]


def test_failed_run_creates_no_output_directory(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    out = tmp_path / "never"
    code, _, err = run_cli(["-bp", str(bad), "-d", str(bad), "-o", str(out)])
    assert code == 1, err
    assert not out.exists() or list(out.iterdir()) == []


def _start(args: list[str], cwd: Path, **popen: object) -> subprocess.Popen:
    """The real CLI in a fresh process, started, not waited for (``cliutil.finish`` waits)."""
    code = "from msprof_compare.entry import compare_main; compare_main()"
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, env=_env(), text=True, **popen)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_standard_output_that_cannot_be_written(kineto: Path, tmp_path: Path) -> None:
    """A full stdout: with -o - the JSON document is the output, so the run fails with one line naming
    standard output (it said "internal error"); with a workbook only the console table is lost, said in one
    warning, and the workbook is written (the run used to fail before writing it). A closed stdout with
    -o - is refused before loading."""
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:  # the three runs at once: only the second writes a file, in out
        runs = [_start(["-bp", str(kineto), "-d", str(kineto), "-o", "-", "--output_format", "json"], tmp_path,
                       stdout=full, stderr=subprocess.PIPE),
                _start(["-bp", str(kineto), "-d", str(kineto), "-o", str(out)], tmp_path, stdout=full,
                       stderr=subprocess.PIPE),
                subprocess.Popen(f"{sys.executable} -c 'from msprof_compare.entry import compare_main; "
                                 f"compare_main()' -bp {kineto} -d {kineto} -o - >&-", shell=True, cwd=tmp_path,
                                 env=_env(), text=True, stderr=subprocess.PIPE)]
        json_run, workbook_run, closed_run = map(finish, runs)
    p = json_run
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip().splitlines()[-1] == \
        "error: <stdout>: cannot write the JSON result: No space left on device"
    p = workbook_run
    assert p.returncode == 0, p.stderr
    assert "Cannot print the console tables to standard output: No space left on device" in p.stderr
    assert len(list(out.glob(RESULT_GLOB))) == 1
    assert "Traceback" not in p.stderr
    p = closed_run
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == \
        "error: -o -: standard output is closed; there is nowhere to write the JSON result"


@pytest.mark.skipif(sys.platform == "win32", reason="a deleted working directory")
def test_deleted_working_directory_and_long_output_names(kineto: Path, tmp_path: Path) -> None:
    """A relative -o in a working directory deleted meanwhile, and an -o name over 255 bytes: usage errors
    before loading (they were an internal error, and an error after the whole load)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); sys.argv[1:2] = []; "
            "from msprof_compare.entry import compare_main; compare_main()")
    # -P: no working directory on sys.path, as for the console scripts; with it, CPython 3.13.0 fails numpy's
    # import from a deleted working directory ("SystemError: error return without exception set")
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []
    p = subprocess.run([sys.executable, *safe_path, "-c", code, str(gone), "-bp", str(kineto), "-d", str(kineto),
                        "-o", "rel"],
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("error: output rel: the current directory no longer exists")
    missing = tmp_path / "no_such_input.json"  # the output is checked first: its error comes, not the input's
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / ("x" * 300))])
    assert code == 2 and "is longer than 255 bytes" in err.strip().splitlines()[-1], err


@pytest.mark.skipif(not hasattr(os, "pathconf"), reason="PATH_MAX is a POSIX limit")
def test_output_path_over_the_systems_path_limit_is_refused_before_loading(kineto: Path, tmp_path: Path) -> None:
    """-o with every name under 255 bytes but a whole path past PATH_MAX (4,096 bytes on Linux) passed the checks
    (the probe runs in the nearest existing folder), compared both inputs, printed the tables, then failed to make
    the folder: exit 1, "File name too long" (found by option fuzzing, optfuzz63). A folder the reports still fit in
    (100 bytes left for "/", the report's temporary or final name) goes on to the inputs."""
    from msprof_compare.report.output import PATH_ROOM

    limit = os.pathconf(tmp_path, "PC_PATH_MAX") - 1  # the NUL counted
    missing = tmp_path / "no_such_input.json"

    def deep(total: int) -> str:  # an absolute path of ``total`` bytes under tmp_path, in names of 200 bytes at most
        sizes, left = [], total - len(os.fsencode(str(tmp_path)))  # each name takes "/" and its own bytes
        while left > 201:
            sizes.append(200)
            left -= 201
        if left == 1:
            sizes[-1], left = 199, 2
        path = str(tmp_path.joinpath(*("d" * n for n in (*sizes, left - 1))))
        assert len(os.fsencode(path)) == total
        return path

    for target in (deep(limit - PATH_ROOM + 1), deep(limit + 900), deep(limit - 50) + "/run.xlsx"):
        code, out, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", target])
        line = _one_error(err)
        assert code == 2 and "with the reports' names in it, it passes this system's limit of" in line, err
        assert f"{limit:,} bytes for a path; give a shorter path" in line and len(line) < 400, line
        assert out == "" and os.listdir(tmp_path) == []  # refused before the compare: no table, nothing made
    fits = deep(limit - PATH_ROOM)
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", fits])
    assert code == 1 and "no_such_input.json" in _one_error(err), err  # on to the inputs


def test_taken_output_name_without_room_for_a_suffix(tmp_path: Path) -> None:
    """An -o file name that exists and is too long for its _1 form is refused before loading (it failed
    at the end of the run); the same name when free, and a taken name with room, are fine."""
    missing = tmp_path / "no_such_input.json"
    for stem_len in (249, 250):  # 254 / 255 bytes with ".xlsx"
        target = tmp_path / ("a" * stem_len + ".xlsx")
        target.write_text("keep")
        code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(target)])
        assert code == 2, err
        assert "first free name with a _N suffix" in _one_error(err) and target.read_text() == "keep"
        target.unlink()
    # 253 bytes: its _1 ... _9 forms fit (255), _10 does not; refused only once _1 ... _9 are taken too
    stem = "b" * 248
    (tmp_path / f"{stem}.xlsx").write_text("keep")
    for i in range(1, 10):
        (tmp_path / f"{stem}_{i}.xlsx").write_text("keep")
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / f"{stem}.xlsx")])
    assert code == 2 and f"{stem[-30:]}_10.xlsx," in _one_error(err), err
    (tmp_path / f"{stem}_9.xlsx").unlink()
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / f"{stem}.xlsx")])
    assert code == 1 and "no_such_input.json" in _one_error(err), err
    for name, present in (("a" * 250 + ".xlsx", False), ("a" * 248 + ".xlsx", True)):
        if present:
            (tmp_path / name).write_text("keep")
        code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / name)])
        assert code == 1 and "no_such_input.json" in _one_error(err), err  # on to the inputs


def test_output_path_with_a_line_break_is_named_escaped(tmp_path: Path) -> None:
    """A line break in an -o path is shown escaped in the error line, not joined into a space (a path that
    does not exist)."""
    odd = tmp_path / "x\ny"
    odd.mkdir()
    (odd / "f.txt").write_text("keep")
    missing = tmp_path / "no_such_input.json"
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(odd / "f.txt")])
    assert code == 2, err
    assert _one_error(err) == f"error: output {tmp_path}/x\\ny/f.txt: the path contains control characters", err


def test_output_path_with_control_characters_is_refused_before_loading(tmp_path: Path) -> None:
    """-o "out<line break>" (or a tab, or DEL) made a folder of that name, which the "has been generated" line can
    only show escaped (no copy of it finds the folder); an input path with one is refused, and so were both in the
    original's path checks. Refused as a usage error before the inputs are read, nothing made; the API's writers
    too. Found by fuzzing the options."""
    import msprof_compare
    from msprof_compare.errors import UsageError

    missing = tmp_path / "no_such_input.json"
    for name in ("out\nnl", "tab\there", "del\x7f.xlsx", "esc\x1b[31m"):
        for face in ([], ["--output_format", "xlsx,json"]):
            code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / name), *face])
            assert code == 2 and _one_error(err).endswith(": the path contains control characters"), err
    assert list(tmp_path.iterdir()) == []
    result = msprof_compare.compare(SRC / "kineto.json", SRC / "kineto.json", enable_api_compare=True)
    for write in (result.to_excel, result.to_json):
        with pytest.raises(UsageError, match=r"^output .*a\\nb: the path contains control characters$"):
            write(tmp_path / "a\nb")
    assert list(tmp_path.iterdir()) == []


def test_output_file_in_a_symlinked_folder_names_the_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "lnk").symlink_to(real)
    missing = tmp_path / "no_such_input.json"
    code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", str(tmp_path / "lnk" / "x.xlsx")])
    assert code == 2, err
    line = _one_error(err)
    assert f"folder {tmp_path / 'lnk'} (the folder of" in line and "is a symbolic link" in line, line


def test_dash_output_with_a_workbook_checks_the_working_directory_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """-o - with an explicit xlsx writes the workbook into the current directory: that directory is checked
    before loading, as any other target (it was found unwritable only after the load)."""
    from msprof_compare.report import deliver

    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(deliver, "output_target", lambda target, suffix, force=False, **_: seen.append((target, suffix))
                        or (os.path.abspath(target), None))  # (folder, file name) as output_target returns them
    deliver.check_target("-", ("xlsx", "json"), explicit_format=True)
    assert seen == [(".", ".xlsx")]
    seen.clear()
    deliver.check_target("-", ("xlsx",), explicit_format=False)  # -o - alone writes no workbook
    assert seen == []


def test_one_folder_for_both_reports_is_checked_once_a_phase(kineto: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``--output_format xlsx,json`` into one folder: the folder is checked (and probed) once before the load and
    once when writing, not once more for the JSON report (its target is the same folder, the checks the same);
    a .json name beside an .xlsx one is still checked for itself."""
    from msprof_compare.report import deliver

    real, seen = deliver.output_target, []
    monkeypatch.setattr(deliver, "output_target",
                        lambda target, suffix, force=False, **kw: seen.append((target, suffix)) or real(
                            target, suffix, force, **kw))
    out = tmp_path / "out"
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "--enable_api_compare", "-o", str(out),
                            "--output_format", "xlsx,json"])
    assert code == 0, err
    assert seen == [(str(out), ".xlsx")] * 2 and sorted(p.suffix for p in out.iterdir()) == [".json", ".xlsx"]
    seen.clear()
    deliver.check_target(str(out / "run.xlsx"), ("xlsx", "json"))
    assert seen == [(str(out / "run.xlsx"), ".xlsx"), (str(out / "run.json"), ".json")]


def test_a_log_line_that_cannot_be_written_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write of a log line fails (stderr full, an I/O error): the line has nowhere to go, and logging's own
    "--- Logging error ---" traceback, printed to that same stderr once it works again, is not printed."""
    import logging

    from msprof_compare.logs import setup_logging

    class Flaky:
        def __init__(self) -> None:
            self.failed, self.text = False, []

        def write(self, text: str) -> int:
            if not self.failed:
                self.failed = True
                raise OSError(5, "Input/output error")
            self.text.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    log = setup_logging()
    stream = Flaky()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(logging, "raiseExceptions", True)
    log.warning("a line nobody can read")
    log.warning("the next line")
    assert stream.failed and "".join(stream.text).count("Logging error") == 0
    assert "the next line" in "".join(stream.text)


def test_output_folder_that_cannot_be_created_is_found_before_loading(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Root passes every access test, so an -o under a file system that refuses new folders (/sys, a read-only
    mount) was found only after the whole comparison (exit 1). Creating a folder there is tried first: a usage
    error, and nothing is left behind."""
    import errno
    import tempfile

    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    def refused(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(UsageError, match=r"cannot create output directory .*new: Read-only file system"):
        output.output_target(str(tmp_path / "new"), ".xlsx")
    monkeypatch.undo()
    assert output.output_target(str(tmp_path / "new"), ".xlsx") == (str(tmp_path / "new"), None)
    assert list(tmp_path.iterdir()) == []  # the probe folder is gone


def test_existing_output_folder_that_refuses_new_entries_is_found_before_loading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for an -o folder that exists: as root, ``-o /sys`` passed the access test and failed the write
    after the whole comparison (exit 1, "cannot write the report"). Tried first now: a usage error (exit 2),
    for the folder and for the folder of a named report file; nothing is left behind."""
    import errno
    import tempfile

    from msprof_compare.errors import UsageError
    from msprof_compare.report import deliver, output

    def refused(*_args, **_kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(UsageError, match=r"^output directory .* is not writable: Operation not permitted$"):
        output.output_target(str(tmp_path), ".xlsx")
    with pytest.raises(UsageError, match=r"the folder of .*run\.json\) is not writable: Operation not permitted$"):
        deliver.check_target(str(tmp_path / "run.json"), ("json",))
    monkeypatch.undo()
    assert output.output_target(str(tmp_path), ".xlsx") == (str(tmp_path), None)
    assert list(tmp_path.iterdir()) == []  # the probe folder is gone


def test_a_folder_that_cannot_be_synced_after_publishing_costs_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The output folder's own flush, after the reports are published, is best effort: a write-only "drop box"
    folder (mode -wx, which cannot be opened for reading) failed the run with its reports already in place."""
    import errno

    from msprof_compare.report import output

    real_open = os.open

    def no_read(path, flags, *args, **kwargs):
        if os.path.realpath(str(path)) == os.path.realpath(tmp_path):
            raise OSError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(output.os, "open", no_read)
    paths = output.write_new_files(str(tmp_path), "r", [(".json", lambda t: Path(t).write_text("x"), "JSON result")])
    assert [Path(p).name for p in paths] == ["r.json"] and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_log_call_that_does_not_format_is_still_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a failed write is dropped silently; a message that does not format (a bug of ours) still gets
    logging's report."""
    import io
    import logging

    from msprof_compare.logs import _StderrHandler, setup_logging

    handler = next(h for h in setup_logging().handlers if isinstance(h, _StderrHandler))
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(logging, "raiseExceptions", True)
    handler.handle(logging.LogRecord("msprof-analyze", logging.WARNING, __file__, 1, "two args %s %s", ("one",),
                                     None))
    assert "--- Logging error ---" in err.getvalue()


def test_unwritable_folder_of_a_report_file_is_named_as_the_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o ro/run.xlsx` in a folder this user may not write used to say "output directory ro/run.xlsx is not
    writable", naming the report file as the folder (found by the session-14 user audit on a read-only
    mount). The folder is named, and the -o that led to it; a plain folder target reads as before. os.access
    is patched because root passes every access test."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(ro) else real_access(p, mode, **kw))
    with pytest.raises(UsageError) as exc:
        output.output_target(str(ro / "run.xlsx"), ".xlsx")
    assert str(exc.value) == f"output directory {ro} (the folder of {ro / 'run.xlsx'}) is not writable"
    with pytest.raises(UsageError) as exc:
        output.output_target(str(ro), ".xlsx")
    assert str(exc.value) == f"output directory {ro} is not writable"
    with pytest.raises(UsageError) as exc:  # a missing folder below it: the folder to be made is named
        output.output_target(str(ro / "new" / "run.json"), ".json")
    assert str(exc.value) == (f"cannot create output directory {ro / 'new'} (the folder of {ro / 'new' / 'run.json'}): "
                              f"{ro} is not writable")


def test_the_folder_of_a_relative_report_file_is_named_as_typed(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o ro/run.xlsx` said "output directory /home/u/ro (the folder of ro/run.xlsx) is not writable": a path the
    user never typed. The folder is named as typed, its absolute path after it (as the folder above a missing
    target is, test below); a report file in the current directory says so; an absolute target reads as before."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    ro = tmp_path / "ro"
    ro.mkdir()
    (tmp_path / "afile").write_text("x")
    os.symlink(ro, tmp_path / "lnk")
    monkeypatch.chdir(tmp_path)
    real_access = os.access
    locked = {str(ro), str(tmp_path)}
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) in locked else real_access(p, mode, **kw))
    for target, message in (
            ("ro/run.xlsx", f"output directory ro ({ro}, the folder of ro/run.xlsx) is not writable"),
            ("./ro/run.xlsx", f"output directory ./ro ({ro}, the folder of ./ro/run.xlsx) is not writable"),
            (str(ro / "run.xlsx"), f"output directory {ro} (the folder of {ro / 'run.xlsx'}) is not writable"),
            ("run.xlsx", f"output directory {tmp_path} (the current directory, the folder of run.xlsx) is not "
                         "writable"),
            ("afile/run.xlsx", f"output path afile ({tmp_path / 'afile'}, the folder of afile/run.xlsx) is a file, not "
                               "a directory"),
            ("lnk/run.xlsx", f"output folder lnk ({tmp_path / 'lnk'}, the folder of lnk/run.xlsx) is a symbolic link; "
                             "refusing to write through it"),
            ("new/run.json", f"cannot create output directory new ({tmp_path / 'new'}, the folder of new/run.json): "
                             f"{tmp_path} (the current directory) is not writable")):
        with pytest.raises(UsageError) as exc:
            output.output_target(target, target[-5:])
        assert str(exc.value) == message, target


def test_an_unwritable_folder_above_a_relative_target_is_named_as_written(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o rodir/new` under a folder this user may not write said "... {abs}/rodir is not writable": a path the user
    never typed. The folder is named as written, its absolute path after it; a target written absolute names it
    once, and the first name of a relative target is said to be in the current directory. os.access is patched
    because root passes every access test."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    ro = tmp_path / "rodir"
    ro.mkdir()
    monkeypatch.chdir(tmp_path)
    locked = {str(ro), str(tmp_path)}
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) in locked else real_access(p, mode, **kw))
    for target, shown in (("rodir/new", f"rodir ({ro})"), ("rodir/new/deeper/", f"rodir ({ro})"),
                          ("./rodir/new", f"./rodir ({ro})"), (str(ro / "new"), str(ro)),
                          ("new", f"{tmp_path} (the current directory)"), ("./new", f". ({tmp_path})")):
        with pytest.raises(UsageError) as exc:
            output.output_target(target, ".xlsx")
        assert str(exc.value) == f"cannot create output directory {target}: {shown} is not writable", target


# --------------------------------------------------------------------------- coverage audit


def _fill(text: str):
    def fill(path: str) -> None:
        Path(path).write_text(text)
    return fill


def test_report_set_moves_on_together_when_a_name_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workbook and the JSON of one run keep one stem: where the JSON's name is taken (another run of the same
    second published it meanwhile), the workbook already linked under the stem is given back and both take the
    next free stem; the other run's file is left as it was. With every stem taken: one error, nothing left."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.report import output

    (tmp_path / "r.json").write_text("other run")
    parts = [(".xlsx", _fill("wb"), "workbook"), (".json", _fill("{}"), "JSON result")]
    got = output.write_new_files(str(tmp_path), "r", parts)
    assert got == [str(tmp_path / "r_1.xlsx"), str(tmp_path / "r_1.json")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r_1.json", "r_1.xlsx"]
    assert (tmp_path / "r.json").read_text() == "other run" and (tmp_path / "r_1.xlsx").read_text() == "wb"
    monkeypatch.setattr(output, "MAX_SUFFIX", 2)
    with pytest.raises(ProfileError) as info:
        output.write_new_files(str(tmp_path), "r", parts)
    assert (info.value.path, info.value.message) == (str(tmp_path), "too many existing files named r_N")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r_1.json", "r_1.xlsx"]


def test_reports_written_from_a_worker_thread(tmp_path: Path) -> None:
    """Python installs signal handlers in the main thread only: a compare run in another thread (a service, a
    notebook's executor) publishes its reports without deferring signals, instead of failing."""
    import threading

    from msprof_compare.report import output

    got: list = []
    t = threading.Thread(target=lambda: got.append(output.write_new_files(
        str(tmp_path), "r", [(".json", _fill("{}"), "JSON result")])))
    t.start()
    t.join()
    assert got == [[str(tmp_path / "r.json")]] and (tmp_path / "r.json").read_text() == "{}"


def test_stale_cleanup_leaves_a_link_named_as_a_temporary(tmp_path: Path) -> None:
    """A day-old symbolic link named as our temporary folder is neither a file nor a folder of ours: it is left,
    and so is what it points at."""
    from msprof_compare.report import output

    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "data.txt").write_text("keep")
    link = tmp_path / ".performance_comparison_result_x.tmp"
    link.symlink_to(target)
    past = time.time() - 2 * output.STALE_TMP_SECONDS
    os.utime(link, (past, past), follow_symlinks=False)
    assert output.remove_stale_temporaries(str(tmp_path)) == 0
    assert link.is_symlink() and (target / "data.txt").read_text() == "keep"


def test_one_run_has_one_timestamp(kineto: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON's ``generated_at`` and the reports' default names come from one instant: with a clock that moves
    a second at each read (a run crossing a second's boundary), a JSON named ..._20261203090000.json said
    "generated_at": "2026-12-03T09:00:01Z", and an xlsx,json pair could name one second and say the next."""

    from msprof_compare import api
    from msprof_compare.report import deliver, output

    ticks = iter(range(1000))

    class Ticking(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return datetime(2026, 12, 3, 9, 0, 0, tzinfo=timezone.utc) + timedelta(seconds=next(ticks))

    monkeypatch.setattr(output, "datetime", Ticking)
    for formats in ("json", "xlsx,json"):
        result = api.compare(str(kineto), str(kineto), enable_profiling_compare=True, output_format=formats)
        out = tmp_path / formats
        written = [Path(p) for p in deliver.write_reports(result, str(out), explicit_format=True)]
        stamps = {p.stem.rsplit("_", 1)[1] for p in written}
        (stamp,) = stamps
        generated = json.loads(next(p for p in written if p.suffix == ".json").read_text())["generated_at"]
        assert generated == datetime.strptime(stamp, "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ"), formats
    monkeypatch.chdir(tmp_path / "json")  # -o - with xlsx,json: the workbook in the working directory
    capsys.readouterr()
    written = deliver.write_reports(result, "-", explicit_format=True)
    stamp = Path(written[0]).stem.rsplit("_", 1)[1]
    assert json.loads(capsys.readouterr().out)["generated_at"] == \
        datetime.strptime(stamp, "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ")


def test_output_below_a_broken_symbolic_link_is_refused_before_loading(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o gone/run`` where ``gone`` is a symbolic link to nothing: the check walked up past it (it does not
    exist) and passed, the inputs were loaded and compared, and the run then failed with exit 1 ("cannot create
    output directory: No such file or directory"). Now a usage error before the load, naming the link (the
    inputs here do not exist: their error would come first if they were read)."""
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    missing = str(tmp_path / "missing.json")
    for target in ("gone/run", "gone/a/run.xlsx"):
        code, _, err = run_cli(["-bp", missing, "-d", missing, "-o", str(tmp_path / target)])
        assert code == 2, err
        assert _one_error(err).endswith(f": {tmp_path / 'gone'} is a broken symbolic link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gone"]
    # a relative target names the link as written, its absolute path after it
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as exc:
        output.output_target("gone/run", ".xlsx")
    assert str(exc.value) == f"cannot create output directory gone/run: gone ({tmp_path / 'gone'}) is a broken " \
                             "symbolic link"
    # two links naming each other: both exist, so "broken" alone sent the user looking for a missing target
    # (found by option fuzzing, optfuzz63)
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    code, _, err = run_cli(["-bp", missing, "-d", missing, "-o", str(tmp_path / "loop_a" / "run")])
    assert code == 2 and _one_error(err).endswith(f": {tmp_path / 'loop_a'} is a broken symbolic link (a loop of "
                                                  "links: Too many levels of symbolic links)"), err


# A child that runs the CLI under a file-size limit (RLIMIT_FSIZE) with SIGXFSZ ignored, so an over-long write
# fails with EFBIG ("File too large") instead of killing the process.
_FSIZE_CHILD = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from msprof_compare.entry import compare_main
sys.argv = ["msprof-compare"] + sys.argv[2:]
compare_main()
"""


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX resource limits")
def test_file_size_limit_hit_mid_write(tmp_path: Path) -> None:
    """A report that outgrows the process's file-size limit (``ulimit -f``) mid-write: exit 1, one line naming the
    folder and the report, nothing left (no temporary folder, no output folder the run made). The sample's ApiCompare
    workbook is about 8 KB and its JSON 19 KB: at 12,000 bytes the workbook fits and the JSON does not."""
    sample = ROOT / "sample_data" / "bert-small_h100.json.gz"
    limits = ((2000, "workbook"), (12_000, "JSON result"))
    runs = [subprocess.Popen([sys.executable, "-c", _FSIZE_CHILD, str(limit), "-bp", str(sample), "-d", str(sample),
                              "--enable_api_compare", "--output_format", "xlsx,json", "-o",
                              str(tmp_path / f"out{limit}")],
                             env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for limit, _ in limits]  # both at once, each with its own output folder
    for (limit, what), run in zip(limits, runs, strict=True):
        out = tmp_path / f"out{limit}"
        proc = finish(run)
        assert proc.returncode == 1, proc.stderr
        assert _one_error(proc.stderr) == f"error: {out}: cannot write the {what}: File too large"
        assert not out.exists()


def test_report_name_of_dots_alone_is_refused_before_loading(kineto: Path, tmp_path: Path) -> None:
    """``-o .xlsx`` (or ``..json``, ``dir/.XLSX``) names no file before the extension: ``os.path.splitext`` reads
    no extension there, so with both formats the two reports took one name and the run failed after the load with
    "too many existing files named .xlsx_N" (exit 1), and ``-o .json`` wrote its workbook into a folder ".xlsx_1"
    where a ".xlsx" folder existed, under a notice naming ".json.xlsx". Found by fuzzing the options."""
    missing = tmp_path / "no_such_input.json"
    for typed in (".xlsx", "..json", "sub/.XLSX"):
        for fmt in ([], ["--output_format", "json"], ["--output_format", "xlsx,json"]):
            target = str(tmp_path / typed)
            code, _, err = run_cli(["-bp", str(missing), "-d", str(missing), "-o", target, *fmt])
            line = _one_error(err)
            assert code == 2 and line == (f"error: -o {target} names no file before {typed[-5:]}; give a name such "
                                          f"as run{typed[-5:].lower()}, or a directory"), err
    assert list(tmp_path.iterdir()) == []
    # an existing folder of that name is a folder, as any other; a hidden name with a stem is a file name
    (tmp_path / ".xlsx").mkdir()
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(tmp_path / ".xlsx"),
                            "--enable_profiling_compare", "--output_format", "xlsx,json"])
    assert code == 0, err
    assert sorted(p.suffix for p in (tmp_path / ".xlsx").iterdir()) == [".json", ".xlsx"]
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", str(tmp_path / ".run.xlsx"),
                            "--enable_profiling_compare", "--output_format", "xlsx,json"])
    assert code == 0 and (tmp_path / ".run.xlsx").is_file() and (tmp_path / ".run.json").is_file(), err


def test_api_report_name_of_dots_alone_is_refused(tmp_path: Path) -> None:
    """The result's writers refuse such a name too (``output_target``), writing nothing."""
    import msprof_compare
    from msprof_compare.errors import UsageError

    result = msprof_compare.compare(SRC / "kineto.json", SRC / "kineto.json", enable_profiling_compare=True)
    for write, name in ((result.to_excel, ".xlsx"), (result.to_json, "..json"), (result.to_json, ".JSON")):
        with pytest.raises(UsageError, match=r"names no file before \.(xlsx|json|JSON); give a name such as run\."):
            write(tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    assert Path(result.to_json(tmp_path / ".a.json")).name == ".a.json"


@pytest.mark.parametrize(("target", "said"), [
    (" ", "output ' ': the path is only whitespace"),
    ("\u3000", "output '\u3000': the path is only whitespace"),  # an ideographic space: blank, no control character
    ("runs/ ", "output 'runs/ ': the name ' ' in it is only whitespace"),
    ("runs/  /run.xlsx", "output 'runs/  /run.xlsx': the name '  ' in it is only whitespace"),
    ("  .json", "-o   .json names no file before .json"),
])
def test_an_output_name_of_blanks_alone_is_refused(target: str, said: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, kineto: Path) -> None:
    """``-o " "`` (a variable holding a space) made a folder named " " without a word, a name nobody sees in a
    listing or types back. A name of the target that is only whitespace and would be created is a usage error
    before the load; nothing is made. Found by fuzzing the command line."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "--enable_api_compare", "-o", target])
    assert (code, out) == (2, "")
    assert error_lines(err)[0].startswith(f"error: {said}"), err
    assert len(error_lines(err)) == 1
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_named_by_blanks_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         kineto: Path) -> None:
    """A folder of blanks that is there already is written into: only creating one is refused."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    monkeypatch.chdir(tmp_path)
    (tmp_path / " ").mkdir()
    assert output.output_target(" ", ".xlsx") == (str(tmp_path / " "), None)
    assert output.output_target(" /run.xlsx", ".xlsx") == (str(tmp_path / " "), "run.xlsx")
    with pytest.raises(UsageError, match=r"^output ' / ': the name ' ' in it is only whitespace"):
        output.output_target(" / ", ".xlsx")


@pytest.mark.parametrize(("code", "reason"), [("ENOENT", "No such file or directory"),
                                              ("ENOSPC", "No space left on device")])
def test_a_folder_that_refuses_new_entries_says_it_cannot_hold_them(code: str, reason: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, ``-o /proc`` passed the access test and the probe read "output directory /proc is not writable: No
    such file or directory" (procfs answers a new entry so): a folder there and writable, where nothing is missing.
    A reason other than a refused write (EACCES, EPERM, EROFS keep "is not writable") now says the folder cannot
    hold new files, with the system's reason; for a folder to create, it names the existing folder that refused,
    as the target wrote it."""
    import errno
    import tempfile

    from msprof_compare.errors import UsageError
    from msprof_compare.report import output

    def refused(*_args: object, **_kwargs: object) -> None:
        raise OSError(getattr(errno, code), reason)

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(UsageError) as exc:
        output.output_target(str(tmp_path), ".xlsx")
    assert str(exc.value) == f"output directory {tmp_path} cannot hold new files (creating one in it fails: {reason})"
    with pytest.raises(UsageError) as exc:
        output.output_target(str(tmp_path / "new" / "run.json"), ".json")
    assert str(exc.value) == (f"cannot create output directory {tmp_path / 'new'} (the folder of "
                              f"{tmp_path / 'new' / 'run.json'}): {tmp_path} cannot hold new files (creating one in "
                              f"it fails: {reason})")
    # a relative target names that folder as written, its absolute path after it (as "is not writable" does)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as exc:
        output.output_target("sub/new", ".xlsx")
    assert str(exc.value) == (f"cannot create output directory sub/new: sub ({tmp_path / 'sub'}) cannot hold new "
                              f"files (creating one in it fails: {reason})")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not os.path.isdir("/proc/self"),
                    reason="only root passes /proc's access test; procfs is Linux's")
def test_proc_as_root_cannot_hold_new_files(kineto: Path) -> None:
    """The real case: ``-o /proc`` as root, before the load."""
    code, _, err = run_cli(["-bp", str(kineto), "-d", str(kineto), "-o", "/proc"])
    assert code == 2
    assert error_lines(err) == ["error: output directory /proc cannot hold new files (creating one in it fails: No "
                                "such file or directory)"]
