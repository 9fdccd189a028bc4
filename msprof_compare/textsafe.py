"""Text from profiles and arguments (op, kernel, module and group names, paths) made safe for a terminal.

A trace from someone else must not be able to move the cursor, clear the screen, set the window title,
break a log line in two or reorder text on the user's terminal: C0 / C1 control characters (ESC, CR, LF,
BEL, CSI ...) and the Unicode bidirectional controls are shown as Python escapes (``\\x1b``, ``\\n``,
``\\u202e``) in console tables, log lines and error lines. Bytes of a file name that are not UTF-8 become ``\\xNN``
escapes here and in every report (``display``).
"""

from __future__ import annotations

import re
import shlex
import sys
import unicodedata

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def display(text: str) -> str:
    """A path as text any report can hold (UTF-8 files, xlsx XML): bytes of a file name that are not
    UTF-8 (which Python keeps as lone surrogates) become ``\\xNN`` escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _escape(match: re.Match) -> str:
    return repr(match.group())[1:-1]


def term_safe(text: object, keep_newlines: bool = False) -> str:
    """``text`` with terminal-controlling characters escaped (line breaks kept when ``keep_newlines``)."""
    s = display(str(text))
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_escape, line) for line in s.split("\n"))
    return _UNSAFE.sub(_escape, s)


_BREAK = re.compile(r"(?:[ \t]*(?:\r\n|[\r\n]))+[ \t]*")


def one_line(text: object) -> str:
    """``text`` on one line: each line break inside it, with the indentation around it, becomes one space;
    breaks at either end go. Other spaces stay (a path the message names may hold runs of them, or start with
    one), and so do other line separators (U+2028: escaped when written, as any control character)."""
    return _BREAK.sub(" ", str(text).strip("\r\n"))


def short_list(items: list, limit: int, escape: bool = True) -> str:
    """The first ``limit`` items, comma-separated, then ", ... (N in all)" when there are more: a message names a
    few of many files or ids without burying its line. ``escape``: terminal-safe, for a log line (a text that
    also goes to a sheet or the JSON keeps its names as they are, and the console escapes it where it prints)."""
    shown = ", ".join(term_safe(i) if escape else str(i) for i in items[:limit])
    return shown + (f", ... ({len(items):,} in all)" if len(items) > limit else "")


_PLAIN_ID = re.compile(r"0|[1-9][0-9]*")


def id_ranges(ids: list, limit: int = 12, escape: bool = True) -> str:
    """Step ids in their order, each run of three or more consecutive ones as "first-last" ("1-4000"), and past
    ``limit`` pieces the first ones, "...", the last and "(N in all)": a long job's thousands of steps made a
    refusal line of tens of kilobytes. Ids that are not plain non-negative integers ("x", "007") stay as they
    are and break a run."""
    runs: list[list] = []  # [first text, last int, count] or [text, None, 1]
    for item in ids:
        text = str(item).strip()
        number = int(text) if _PLAIN_ID.fullmatch(text) else None
        last = runs[-1] if runs else None
        if number is not None and last is not None and last[1] is not None and number == last[1] + 1:
            last[1], last[2] = number, last[2] + 1
        else:
            runs.append([text, number, 1])
    pieces: list[str] = []
    for first, end, count in runs:
        if count >= 3:
            pieces.append(f"{first}-{end}")
        else:  # two in a row read better as "4, 5"
            pieces.extend([first, str(end)] if count == 2 else [first])
    if escape:
        pieces = [term_safe(p) for p in pieces]
    if len(pieces) <= limit:
        return ", ".join(pieces)
    return f"{', '.join(pieces[:limit - 1])}, ..., {pieces[-1]} ({len(ids):,} in all)"


def and_list(items: list[str]) -> str:
    """"a", "a and b", "a, b and c": items as a sentence lists them ("" for none)."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def wrap_prose(text: str, width: int) -> str:
    """``text`` with each line of prose wider than ``width`` terminal columns broken at spaces; table lines
    ("+-..." / "| ...") stay whole. For a terminal: a note of over 700 characters wrapped by the terminal broke
    words in two. Widths are terminal columns (``_columns_of``): a count of characters let a line naming CJK
    operators run to twice the width, which the terminal broke again inside words. A word longer than the width
    (a module path) keeps its line."""
    if width < 40:  # a terminal this narrow (or a size it could not tell) breaks the tables anyway
        return text
    out = []
    for line in text.split("\n"):
        if line.startswith(("+", "|")) or _line_columns(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        # continuation lines keep the indent, and a "- " bullet's text lines up under its first word
        hang = indent + ("  " if body.startswith("- ") else "")
        if len(hang) * 2 > width:
            hang = ""
        row: list[str] = []
        used = len(indent)
        for word in _glued_units(body.split(" ")):
            columns = _line_columns(word)
            if row and used + 1 + columns > width and "".join(row):
                out.append(indent + " ".join(row).rstrip(" "))
                row, used, indent = [], len(hang), hang
            if row or word:  # no space left at the start of a broken line
                used += (1 if row else 0) + columns
                row.append(word)
        if row or indent:  # not a line of the spaces after the last word
            out.append(indent + " ".join(row).rstrip(" "))
    return "\n".join(out)


#: A unit after a figure ("2.06 GB", "-6.019 ms),"): ``wrap_prose`` keeps the two on one line.
_UNIT = re.compile(r"(?:ms|us|µs|ns|s|KB|MB|GB|GB/s)[),.;:]*")


def _glued_units(words: list[str]) -> list[str]:
    """``words`` with each unit joined to the figure before it (by the space they had), so that a wrapped note
    never leaves "2.06" at the end of a line and its "GB" at the start of the next."""
    out: list[str] = []
    for word in words:
        if out and out[-1][-1:].isdigit() and _UNIT.fullmatch(word):
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def _line_columns(text: str) -> int:
    return sum(_columns_of(ch) for ch in text) if not text.isascii() else len(text)


def text_width(text: str) -> int:
    """Width of ``text`` in spreadsheet column units, for sizing a column or a wrapped row: East Asian wide and
    full-width characters take two."""
    return len(text) + sum(1 for ch in text if not ch.isascii() and unicodedata.east_asian_width(ch) in "WF")


def _columns_of(ch: str) -> int:
    """Terminal columns of one character: 2 for East Asian wide / full-width ones, 0 for combining marks."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def cut_columns(text: str, columns: int, keep_end: bool = False) -> str:
    """``text`` in at most ``columns`` terminal columns, ending "..." where cut: a count of characters let a
    70-character CJK operator name take 140 columns (each is two wide) and cut accented ones short.
    (``text_width`` is the spreadsheet's measure, where a combining mark still counts.) ``keep_end``: cut the
    start instead ("..." first), for names whose end says most (a module path, then its operator)."""
    widths = [_columns_of(ch) for ch in text]
    if sum(widths) <= columns:
        return text
    if keep_end:
        used, start = 0, len(text)
        while used + widths[start - 1] <= columns - 3:
            start -= 1
            used += widths[start]
        return "..." + text[start:]
    used = end = 0
    while used + widths[end] <= columns - 3:  # stops inside the text: it is wider than ``columns``
        used += widths[end]
        end += 1
    return text[:end] + "..."


_DIRECTION = re.compile(r"^/\[[^\]/]*\](?=/)")   # "/[ BACKWARD ]" in front of a module path


def cut_module_columns(text: str, columns: int) -> str:
    """A "module path > operator" name in at most ``columns`` terminal columns: its leading path components give
    way to "..." whole, and its "/[ BACKWARD ]" marker stays in front. A cut from the left alone dropped the marker,
    so DB level2 -> level1's backward ``.../ Sequential_1/ Linear_0 > aten::mm`` read as a forward row. A last
    component and operator too wide on their own are cut from their start, after the marker."""
    widths = sum(_columns_of(ch) for ch in text)
    if widths <= columns:
        return text
    marker = _DIRECTION.match(text)
    head = marker.group(0) if marker else ""
    rest = text[len(head):]
    path = rest.rpartition(" > ")[0] or rest
    lead = f"{head}/ ..." if head else "..."
    for i in [i for i, ch in enumerate(path) if ch == "/" and i]:  # a leading "/" cuts nothing
        shown = lead + rest[i:]
        if sum(_columns_of(ch) for ch in shown) <= columns:
            return shown
    room = columns - len(head)
    return head + cut_columns(rest, room, keep_end=True) if head and room >= 20 else cut_columns(text, columns, True)


def short_repr(value: object) -> str:
    """``repr(value)`` cut to 40 characters: one bad value quoted in a one-line message (a 5,000-digit text or
    a long blob would bury the line)."""
    try:
        text = repr(value)
    except ValueError:  # an int (or a list holding one) past Python's 4,300-digit limit of int -> str
        return "<too long to show>"
    except Exception:  # noqa: BLE001  (an API user's object whose __repr__ fails: the message, not its repr)
        return f"<{_type_name(value)} object>"
    if not isinstance(text, str):  # pragma: no cover  (repr() itself refuses a __repr__ that returns no str)
        return f"<{_type_name(value)} object>"
    return short_text(text)


def json_repr(value: object) -> str:
    """A value read from a JSON file as that file writes it, for a one-line message: ``null`` / ``true`` /
    ``false`` where Python's repr says None / True / False (a user searching the file finds no "None"); any
    other value by ``short_repr``."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return short_repr(value)


def _type_name(value: object) -> str:
    """The name of ``value``'s type for a message, cut as a repr is (a class made with a 5,000-character name)."""
    return short_text(str(getattr(type(value), "__qualname__", "") or "unknown"))


def short_text(text: str) -> str:
    """``text`` (a value as its file writes it, a repr) cut to 40 characters, as ``short_repr`` cuts a repr."""
    return text if len(text) <= 40 else text[:37] + "..."


def write_line(text: str, keep_newlines: bool = False) -> None:
    """Write ``text`` made safe, and a line end, to stderr. A closed or full stream is passed over: what is
    written there is the last word of a run, and the exit status must stay the one meant."""
    try:
        sys.stderr.write(term_safe(text, keep_newlines) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def shell_word(text: str) -> str:
    """``text`` quoted for a POSIX shell, so that a value a message gives pastes into bash as it is: Python's
    quoting (``repr``) escapes a backslash, and a quote mark in a name holding both kinds (``'a\\\\b'``,
    ``'it\\'s "x"'``), which the shell then reads as other characters. Quoted even where the shell reads it bare,
    so that it stands out as a value. A value holding a control character (a line break, an escape, a bidi mark) is
    written in bash's ``$'...'`` quoting, each such character as its escape: single quotes would hold it as it is,
    which breaks the message's line or drives the terminal, and showing it escaped inside them (``'a\\nb'``) pastes
    as a backslash and a letter, not the value typed."""
    if _UNSAFE.search(text):
        return "$'" + "".join(_ansi_c(c) for c in text) + "'"
    quoted = shlex.quote(text)
    return quoted if quoted != text else f"'{text}'"


_ANSI_C = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def _ansi_c(ch: str) -> str:
    """One character inside bash's ``$'...'``: itself, or the escape bash reads back as it (``\\u`` above ASCII, as
    ``\\x85`` would be the byte 0x85, not U+0085)."""
    if ch in _ANSI_C:
        return _ANSI_C[ch]
    if not _UNSAFE.match(ch):
        return ch
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x80 else f"\\u{ord(ch):04x}"


def short_shell_word(value: object) -> str:
    """A command-line value quoted for a POSIX shell (``shell_word``), cut to 40 characters as ``short_repr`` cuts a
    repr: the CLI's messages quoting what was typed (a step, a repeated option's values) gave Python's quoting,
    which bash reads otherwise for a value holding a backslash or a quote mark. A control character is already an
    escape of ``shell_word``'s ``$'...'``; ``term_safe`` still writes a file name's undecodable bytes as ``\\xNN``.
    Not text (a value given to the CLI by a program): its ``short_repr``."""
    return short_text(term_safe(shell_word(value))) if isinstance(value, str) else short_repr(value)
