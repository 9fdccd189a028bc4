"""Console prose wrapped at the terminal's width (session 47).

The notes under the console tables run to over 700 characters (PARAM AlexNet, hta's trace, against the NPU
level-1 text export: 729); a terminal wraps such a line wherever the width ends, in the middle of words. On a
terminal the CLI now breaks prose lines at spaces; the tables stay whole (a table wider than the terminal cannot
be helped by breaking it), and a pipe or a file keeps one line per note, so that grep finds a note whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from msprof_compare import cli
from msprof_compare.textsafe import wrap_prose

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "sample_data" / "bert-small_h100.json.gz"
COMP = REPO / "sample_data" / "bert-small_mi300.json.gz"
#: The README pair's note under its operator contributors, two sentences of two lines on a pipe (229 and 101
#: characters; one of 331 before), joined by the wrap's spaces on a terminal.
NOTE = ("Note: all operators together changed by +0.081 ms, against an E2E change of -0.412 ms: the E2E change is "
        "outside their device time (the waterfall puts all of it in Free: Other -0.493 ms; other steps moved +0.081 "
        "ms the other way). The Share column is "
        "of 0.130 ms, the sizes of their changes added up (savings do not cancel growth).")
#: The note as the CLI prints it now: where Free: Other holds the E2E change, the note says what that step is and
#: where to look next (NOTE stays the wrap tests' fixture, whose line breaks they count).
CLI_NOTE = NOTE.replace("the other way).", "the other way; Free: Other is device idle time: the device waited less for "
                        "work, as where the host was quicker to launch it or to load its data; ApiCompare times the "
                        "host calls).")


def test_prose_breaks_at_spaces_and_tables_stay_whole() -> None:
    table = "+---+\n| " + "x" * 120 + " |\n+---+"
    text = wrap_prose(f"{table}\n{NOTE}", 100)
    lines = text.split("\n")
    assert lines[:3] == table.split("\n")
    assert all(len(line) <= 100 for line in lines[3:]) and len(lines) == 3 + 4
    assert " ".join(lines[3:]) == NOTE  # every word kept, none broken
    # the last space that fits 100 columns: 94 characters, and " change" would make 101
    assert lines[3].endswith("-0.412 ms: the E2E") and len(lines[3]) == 94
    assert wrap_prose(NOTE, len(NOTE)) == NOTE and wrap_prose(NOTE, 20) == NOTE  # fits; too narrow to help
    path = "/ Qwen2Model_0/ " * 12  # a word wider than the line keeps its line whole
    assert wrap_prose(f"a {path.replace(' ', '')} b", 60).split("\n") == ["a", path.replace(" ", ""), "b"]


#: NPU pair 1's memory line (level1 -> level2 text exports) as session 58 worded it, one line of 245 characters on
#: a pipe: the text on which 100 columns split a figure from its unit.
MEMORY_LINE = ("No operator's allocated memory changed (35 operators); memory allocated inside operators (their "
               "allocations summed, not a footprint) 1426.02 MB on both sides; peak reserved memory (Mem Usage) "
               "2.06 GB on both sides.")


def test_a_figure_keeps_its_unit_on_its_line() -> None:
    """At 100 columns pair 1's memory line broke between "2.06" and "GB" (a figure at a line's end, its unit
    starting the next, read as two things); a unit now stays with the figure before it, and only there."""
    lines = wrap_prose(MEMORY_LINE, 100).split("\n")
    assert " ".join(lines) == MEMORY_LINE and all(len(line) <= 100 for line in lines)
    assert lines[2] == "2.06 GB on both sides." and lines[1].endswith("(Mem Usage)")
    units = ("ms", "us", "ns", "s", "KB", "MB", "GB")
    for text, width in ((MEMORY_LINE, 100), (NOTE, 100), (NOTE, 60), (NOTE, 45)):
        lines = wrap_prose(text, width).split("\n")
        for before, after in zip(lines[:-1], lines[1:], strict=True):
            assert not (before[-1:].isdigit() and after.split(" ")[0].rstrip("),.;:") in units), (before, after)
    # a unit that follows no figure is a word as any other; "s" after a name, not a number, may start a line
    assert wrap_prose("x" * 99 + " s and more", 100).split("\n") == ["x" * 99, "s and more"]


def _lines_read(leader: int) -> list[str]:
    """What a pseudo-terminal's other end wrote, as lines: read until it is closed (EIO) and everything was read."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other end is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode().replace("\r\n", "\n").split("\n")


def _run(stdout: int, env: dict) -> str:
    out_dir = env.pop("_out")
    proc = subprocess.run(
        [sys.executable, "-c", "from msprof_compare.entry import analyze_main; analyze_main()", "compare",
         "-d", str(COMP), "-bp", str(BASE), "-o", out_dir],
        stdout=stdout, stderr=subprocess.DEVNULL, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 0
    return proc.stdout.decode() if proc.stdout is not None else ""


@pytest.mark.skipif(os.name == "nt", reason="pseudo-terminals are POSIX")
def test_the_cli_wraps_prose_on_a_terminal_only(tmp_path: Path) -> None:
    import pty

    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    piped = _run(subprocess.PIPE, {**env, "_out": str(tmp_path / "a")})
    first, basis = CLI_NOTE.split(" The Share column")  # a pipe: one line per sentence, whatever COLUMNS says
    assert f"{first}\nThe Share column{basis}" in piped

    leader, follower = pty.openpty()
    try:
        _run(follower, {**env, "_out": str(tmp_path / "b")})
        os.close(follower)
        follower = -1
        shown = _lines_read(leader)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    prose = [line for line in shown if line and not line.startswith(("+", "|"))]
    assert prose and all(len(line) <= 100 for line in prose), [line for line in prose if len(line) > 100]
    start = next(i for i, line in enumerate(shown) if line.startswith("Note: all operators"))
    end = next(i for i in range(start, len(shown)) if shown[i].startswith("+"))
    assert " ".join(shown[start:end]) == CLI_NOTE
    tables = [line for line in shown if line.startswith(("+", "|"))]
    assert tables == [line for line in piped.split("\n") if line.startswith(("+", "|"))]  # whole, unchanged


def test_no_terminal_no_width(monkeypatch: pytest.MonkeyPatch) -> None:
    class Closed:
        def isatty(self) -> bool:
            raise ValueError("I/O operation on closed file")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert cli._terminal_columns() == 0


def _columns(text: str) -> int:
    """Terminal columns, counted here on their own: East Asian wide / full-width characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_wide_characters_count_two_columns() -> None:
    """A note naming CJK operators (each character two columns wide) was broken by its count of characters: its
    lines ran to nearly twice the width, and the terminal broke them again inside words."""
    name = "算子融合注意力前向"  # 9 characters, 18 columns
    note = "Note: " + " ".join(f"{name}{i} +0.{i:03d} ms," for i in range(12))
    lines = wrap_prose(note, 60).split("\n")
    assert " ".join(lines) == note  # every word kept, none broken
    assert all(_columns(line) <= 60 for line in lines), [_columns(line) for line in lines]
    # "Note: " (6) + "算子融合注意力前向0" (19) + " +0.000 ms," (11) + " 算子融合注意力前向1" (20) = 56; its " +0.001
    # ms," would make 67. Then "+0.001 ms," (10) + " 算子融合注意力前向2" (20) + " +0.002 ms," (11) = 41; the next
    # name would make 61
    assert [_columns(line) for line in lines[:2]] == [56, 41]
    assert len(lines[0]) < len(note[:60])  # the old count of characters had fitted 60 characters: 84 columns


@pytest.mark.skipif(os.name == "nt", reason="pseudo-terminals are POSIX")
def test_json_on_stdout_wraps_the_console_text_at_the_width_of_stderr(tmp_path: Path) -> None:
    """With ``-o -`` the JSON goes to stdout and the console text to stderr; the width was the one of stdout (a
    file here), which ``shutil`` cannot measure: 80 columns, on a terminal 60 wide. Now stderr's own width."""
    import fcntl
    import json
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 60, 0, 0))  # 40 rows, 60 columns
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    with open(tmp_path / "out.json", "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from msprof_compare.entry import analyze_main; analyze_main()", "compare",
             "-d", str(COMP), "-bp", str(BASE), "-o", "-", "--output_format", "json"],
            stdout=out, stderr=follower, stdin=subprocess.DEVNULL, env={**env, "PYTHONPATH": str(REPO)}, cwd=REPO)
        os.close(follower)
        try:
            shown = _lines_read(leader)
        finally:
            os.close(leader)
        assert proc.wait(timeout=120) == 0
    assert json.loads((tmp_path / "out.json").read_text())["summary"]
    start = next(i for i, line in enumerate(shown) if line.startswith("Note: all operators"))
    end = next(i for i in range(start, len(shown)) if shown[i].startswith(("+", "[")) or not shown[i])
    assert " ".join(shown[start:end]) == CLI_NOTE
    assert all(len(line) <= 60 for line in shown[start:end]), [len(line) for line in shown[start:end]]


def test_columns_from_the_environment_come_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal whose size the kernel does not report (a pty opened without a window size, a serial console)
    is wrapped at ``COLUMNS`` where the shell exported it, as ``shutil.get_terminal_size`` does; a COLUMNS that
    is no positive number is ignored. (A mutant ignoring COLUMNS survived: the pty test's 100 is above the 80 it
    falls back to.)"""
    read_end, write_end = os.pipe()  # a descriptor with no window size: os.get_terminal_size raises

    class Terminal:
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return write_end

    try:
        monkeypatch.setattr(sys, "stdout", Terminal())
        monkeypatch.setenv("COLUMNS", "123")
        assert cli._terminal_columns() == 123
        for bad in ("0", "-5", "wide", ""):
            monkeypatch.setenv("COLUMNS", bad)
            assert cli._terminal_columns() == 0  # no size from COLUMNS, none from the descriptor
    finally:
        os.close(read_end)
        os.close(write_end)


def test_continuation_lines_keep_the_indent_and_a_bullets_hang() -> None:
    """A broken "  - " bullet went on flush left, out of its list; continuation lines now keep the line's indent,
    and a bullet's text lines up under its first word. A plain line goes on flush left, as before."""
    bullet = "  - " + NOTE
    lines = wrap_prose(bullet, 100).split("\n")
    assert lines[0].startswith("  - Note: all operators") and len(lines) > 2
    assert all(line.startswith("    ") and not line.startswith("     ") for line in lines[1:])
    assert all(len(line) <= 100 for line in lines)
    assert " ".join(line.strip() for line in lines) == bullet.strip()
    indented = wrap_prose("  " + NOTE, 100).split("\n")
    assert all(line.startswith("  ") and not line.startswith("   ") for line in indented)
    assert all(not line.startswith(" ") for line in wrap_prose(NOTE, 100).split("\n"))
