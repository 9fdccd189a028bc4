"""Publishing report files safely: the one implementation the xlsx and JSON writers share.

A report is rendered into a temporary file next to its final name and then
published with a hard link, which fails atomically when the name is taken. So
an existing file (for example another run's result) is never replaced, and a
process killed or interrupted while writing never leaves a half-written
report under a final name. SIGTERM/SIGHUP become ``SystemExit`` while
writing, so the temporary file is removed on those signals too; what a SIGKILL
leaves behind is removed by a later run in the same directory once it is a day old.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TextIO

from ..errors import OutOfMemory, ProfileError, UsageError
from ..textsafe import term_safe

FILE_PREFIX = "performance_comparison_result_"
FILE_MODE = 0o640
#: Temporary report files older than this (seconds) were left by a killed run (SIGKILL cannot be
#: caught) and are removed by the next run writing into the same directory.
STALE_TMP_SECONDS = 24 * 3600
DIR_MODE = 0o750
#: The longest file or folder name most file systems take (ext4, XFS, NTFS, APFS: 255).
MAX_NAME_BYTES = 255
#: How many ``_N`` suffixes are tried before giving up on a taken name.
MAX_SUFFIX = 10_000
#: The bytes a report needs inside its folder's path, beyond the folder: "/", its temporary folder and file
#: (``/.performance_comparison_result_XXXXXXXX.tmp/report.xlsx``, 56) or its longest default name
#: (``/performance_comparison_result_rank2147483647_cycle99_YYYYmmddHHMMSS_9999.xlsx``, 79), with room to spare.
PATH_ROOM = 100


def utc_now() -> datetime:
    """The instant a run's reports are stamped with (their default names, the JSON's ``generated_at``): read once
    per run by the writers and handed to each report, so the names and the document agree to the second."""
    return datetime.now(timezone.utc)


def default_name(suffix: str, now: datetime | None = None) -> str:
    """``performance_comparison_result_{UTC %Y%m%d%H%M%S}{suffix}``: a report's name as the original names its
    workbook; the JSON report takes the same, so both kinds of report sort together and read alike."""
    return f"{FILE_PREFIX}{(now or utc_now()).strftime('%Y%m%d%H%M%S')}{suffix}"


#: The report files a target path may name; a target naming one kind is refused for the other.
REPORT_SUFFIXES = (".xlsx", ".json")


def output_target(target: str | bytes | os.PathLike, suffix: str, force: bool = False, *,
                  folder_only: bool = False) -> tuple[str, str | None]:
    """Validate an output target for a report file ending in ``suffix``, leaving nothing behind (the folder is
    probed: a hidden folder is made and removed in it, or in the nearest existing parent of a missing one).

    Returns ``(directory, file name or None)``: a target ending in ``suffix`` that is not an
    existing directory names the file; anything else is a directory. Raises ``UsageError`` for a
    target that can never be written (a symlink, a file where a directory is needed, no write
    permission, a name with the other report's suffix). ``folder_only``: the target must be a folder (a
    rank-by-rank compare's), so a file in its place is not answered with a report file's name.
    """
    raw, say = _target_text(target, suffix)
    try:
        path = os.path.abspath(os.path.expanduser(raw))
    except OSError:  # a relative target in a working directory that was deleted meanwhile
        raise UsageError(f"output {say}: the current directory no longer exists; give an absolute path or "
                         "change to an existing directory") from None
    if raw in (".", "./"):  # the default (no -o): "output directory . is not writable" named no folder one typed
        say = f"{term_safe(path)} (the current directory)"
    long = next((c for c in path.split(os.sep) if len(os.fsencode(c)) > MAX_NAME_BYTES), None)
    if long is not None:
        raise UsageError(f"output {say}: the name {term_safe(long[:40])}... is longer than {MAX_NAME_BYTES} bytes")
    name: str | None = None
    low = path.lower()
    _check_path_length(path, say, low.endswith(suffix) and not os.path.isdir(path))
    # "run.json/" (and "run.json/.") is a directory
    as_dir = os.path.isdir(path) or raw.endswith(("/", os.sep, "/.", os.sep + "."))
    other = next((x for x in REPORT_SUFFIXES if x != suffix and low.endswith(x)), None)
    if other and not as_dir:
        raise UsageError(f"output {say} names a {other} file; give a directory or a {suffix} path")
    if low.endswith(suffix) and not as_dir:
        path, name = os.path.dirname(path), os.path.basename(path)
        if names_no_file(name, suffix):
            # ".xlsx", "..json": os.path.splitext reads no extension in a name of dots before it, so the report set
            # took one name for both files (exit 1 after the load: "too many existing files named .xlsx_N")
            raise UsageError(f"output {say} names no file before {term_safe(name[-len(suffix):])}; give a name such as "
                             f"run{suffix}, or a directory")
        if os.path.islink(os.path.join(path, name)):
            raise UsageError(f"output file {say} is a symbolic link; refusing to write through it")
    # "-o dir/run.xlsx": a message about the folder names the folder (as typed), not the report file
    where = say if name is None else folder_of_report(path, raw, say)
    if os.path.islink(path):
        raise UsageError(f"output {'path' if name is None else 'folder'} {where} is a symbolic link; refusing to "
                         "write through it")
    if os.path.exists(path):
        _check_existing(path, name, say, where, force, folder_only, suffix)
    else:  # missing: it will be created
        _check_creatable(path, where, raw)
    return path, name


def _target_text(target: str | bytes | os.PathLike, suffix: str) -> tuple[str, str]:
    """The target as text ("." for an empty one) and as messages name it; refuses what names no folder or file of
    ours: no path, a NUL or control characters, "-" (standard output: the JSON report's alone), a new name of
    whitespace alone."""
    try:
        raw = os.fsdecode(target) or "."  # str, bytes or a path object, as the inputs
    except TypeError:
        raise UsageError(f"output must be a path (str or os.PathLike), not {type(target).__name__}") from None
    say = term_safe(raw)  # as messages name it: a line break in it escaped, not joined into a space
    if "\0" in raw:  # no file name can hold one (only an API caller's string can)
        raise UsageError(f"output {say}: the path contains a NUL character")
    if any(c < " " or c == "\x7f" for c in raw):
        # as an input path (loaders.paths.check_text) and the original's output checks: -o "out<newline>" made a
        # folder whose name the "has been generated" line could only show escaped, which no copy of it finds
        raise UsageError(f"output {say}: the path contains control characters")
    if raw == "-":
        raise UsageError(f"output '-' (standard output) takes the JSON report only; give a directory or a {suffix} "
                         "path")
    blank = _blank_name(raw)
    if blank is not None:
        # -o " " (a variable holding a space) made a folder named " " without a word: a name nobody sees or types
        what = "the path is only whitespace" if not raw.strip() else \
            f"the name '{term_safe(blank)}' in it is only whitespace"
        raise UsageError(f"output '{say}': {what}, which would make a folder of that name; give a directory or a "
                         f"{suffix} path")
    return raw, say


def _check_existing(path: str, name: str | None, say: str, where: str, force: bool, folder_only: bool,
                    suffix: str) -> None:
    """An existing output folder ``path`` (``name``: the report file named in it, or None): a folder, with a free
    ``_N`` name short enough where ``name`` is taken, writable, not writable by all without the sticky bit (unless
    ``force``), and able to hold new entries (``_probe``). ``say`` / ``where``: the target / its folder as messages
    name them; ``folder_only`` / ``suffix``: as ``output_target``'s."""
    if not os.path.isdir(path):
        # "-o afile" (an existing file without a report's suffix): the line alone left the user to guess that
        # -o may name the report file too (user walk, session 66); a folder's own path needs no such hint
        hint = "" if name is not None else "; give a directory" + (
            "" if folder_only else f", or a name ending in {suffix} for the report file itself")
        raise UsageError(f"output path {where} is a file, not a directory{hint}")
    if name is not None:
        free = first_free_name(path, name)
        if len(os.fsencode(free)) > MAX_NAME_BYTES:
            raise UsageError(f"output {say} exists, and the first free name with a _N suffix, "
                             f"...{term_safe(free[-40:])}, would be longer than {MAX_NAME_BYTES} bytes; give a "
                             "shorter or a free name")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"output directory {where} is not writable")
    if not force and shared_without_sticky_bit(path):
        raise UsageError(f"output directory {where} can be written by every user and has no sticky bit: anyone "
                         "could swap files in it while the report is written (use a directory of your own, or "
                         "--force)")
    _probe(path, f"output directory {where}", existing=True)


def _check_creatable(path: str, where: str, raw: str) -> None:
    """A missing output folder ``path``, to be created: the nearest existing folder above it must allow that (no
    broken link on the way, a writable folder that can hold new entries). ``where``: ``path`` as messages name
    it; ``raw``: the target as given, by which the folder above is named as the user wrote it (``_as_written``)."""
    parent = os.path.dirname(path)
    while parent and not os.path.exists(parent):
        if os.path.islink(parent):  # makedirs cannot go through it: found here, not after the load (exit 1)
            raise UsageError(f"cannot create output directory {where}: {_as_written(parent, raw)} is a broken symbolic "
                             f"link{_loop_note(parent)}")
        nxt = os.path.dirname(parent)
        if nxt == parent:
            break
        parent = nxt
    shown = _as_written(parent, raw)
    if not os.path.isdir(parent):
        raise UsageError(f"cannot create output directory {where}: {shown} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot create output directory {where}: {shown} is not writable")
    _probe(parent, f"cannot create output directory {where}", shown=shown)


def _as_written(folder: str, raw: str) -> str:
    """``folder`` (absolute: a folder above the target ``raw``) as a message names it: as the target wrote it, and
    its absolute path after it where that differs (``rodir (/home/u/rodir)``), so the name is the user's own and the
    folder found all the same; ``(the current directory)`` after it for a relative target's first name. "-o
    rodir/new" said only "/home/u/rodir is not writable", a path the user never typed."""
    shown, note = _written_parts(folder, raw)
    return f"{shown} ({note})" if note else shown


def folder_of_report(folder: str, raw: str, say: str) -> str:
    """The folder (absolute) of a report file the target ``raw`` names (``say``: the target as messages show it),
    as messages name it: as typed, then its absolute path where that differs, and the file it holds (``out
    (/home/u/out, the folder of out/run.xlsx)``); "-o out/run.xlsx" named only "/home/u/out", a path never typed."""
    shown, aside = report_folder_parts(folder, raw, say)
    return f"{shown} ({aside})"


def report_folder_parts(folder: str, raw: str, say: str) -> tuple[str, str]:
    """``folder_of_report``'s two parts: the name and what its brackets hold, for a message that adds to them
    (``check_room``: one bracket, not two in a row)."""
    shown, note = _written_parts(folder, raw)
    return shown, f"{note + ', ' if note else ''}the folder of {say}"


def _written_parts(folder: str, raw: str) -> tuple[str, str]:
    """``_as_written``'s two parts: the name (as written, else absolute) and what follows it in brackets ("" for
    nothing: an absolute target's own path)."""
    text = raw
    while True:
        up = os.path.dirname(text.rstrip("/" + os.sep))
        if not up or up == text:
            break
        text = up
        try:
            if os.path.abspath(os.path.expanduser(text)) == folder:
                return (term_safe(folder), "") if text == folder else (term_safe(text), term_safe(folder))
        except (OSError, ValueError):
            break
    try:
        here = os.getcwd() == folder and not os.path.isabs(os.path.expanduser(raw))
    except OSError:
        here = False
    return term_safe(folder), "the current directory" if here else ""


def _loop_note(link: str) -> str:
    """" (a loop of links ...)" for a link that leads back to itself (two links naming each other), which reads as
    a broken one but points at a name that exists; "" for a link to a missing name."""
    try:
        os.stat(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f" (a loop of links: {exc.strerror})"
    return ""


def _check_path_length(path: str, say: str, names_file: bool) -> None:
    """Refuse a target whose reports' paths would pass the system's limit on a path (PATH_MAX, 4,096 bytes on
    Linux): each name in it was short enough, and the probe in its nearest existing parent passed, so -o with a
    deep enough path ran the whole compare and then failed to make the folder ("File name too long", exit 1).
    ``path``: absolute; ``names_file``: it ends in the report's own name (``-o deep/run.xlsx``)."""
    limit = _path_max(path)
    if limit is None:
        return
    folder = os.path.dirname(path) if names_file else path
    room = max(PATH_ROOM, len(os.fsencode(os.path.basename(path))) + 7) if names_file else PATH_ROOM  # "_9999"
    size = len(os.fsencode(folder)) + room
    if size <= limit - 1:  # the limit counts the closing NUL
        return
    shown = say if len(say) <= 80 else f"{say[:40]}...{say[-30:]}"
    raise UsageError(f"output {shown}: the path is {len(os.fsencode(path)):,} bytes long (absolute); with the "
                     f"reports' names in it, it passes this system's limit of {limit - 1:,} bytes for a path; give a "
                     "shorter path")


def _path_max(path: str) -> int | None:
    """The system's limit on a path's length in bytes (NUL included), asked of the nearest existing folder above
    ``path``; None where the system does not say (Windows)."""
    if not hasattr(os, "pathconf"):
        return None
    parent = path
    while True:
        try:
            if os.path.isdir(parent):
                limit = os.pathconf(parent, "PC_PATH_MAX")
                return limit if limit and limit > 0 else None
        except (OSError, ValueError):
            pass
        up = os.path.dirname(parent)
        if up == parent:
            return None
        parent = up


#: What a refused new entry says when the folder is not writable (a read-only mount, /sys, no permission); any
#: other reason (procfs' ENOENT, a full disk, too many entries) is a folder that cannot hold new files.
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def new_names(raw: str) -> Iterator[str]:
    """The names in the target ``raw`` (its path's parts) that are not there yet, so writing would create them
    (``~`` expanded, as ``output_target`` does); an existing name is the user's. Nothing past a path the system
    cannot test (a NUL: ``output_target`` refuses it)."""
    parts = raw.replace(os.sep, "/").split("/")
    for i, part in enumerate(parts):
        if not part:
            continue
        try:
            there = os.path.lexists(os.path.expanduser("/".join(parts[:i + 1])))
        except (OSError, ValueError):
            return
        if not there:
            yield part


def names_no_file(name: str, suffix: str) -> bool:
    """Whether a report's file ``name`` ending in ``suffix`` holds nothing but dots and blanks before it
    (``.xlsx``, ``..json``): ``os.path.splitext`` reads no extension in such a name, so a report set took one
    name for both files."""
    return not name[:-len(suffix)].replace(".", "").strip()


def _blank_name(raw: str) -> str | None:
    """The first name of the target ``raw`` that is only whitespace and is not there yet (``" "``, ``"runs/ "``,
    ``"runs/ /run.xlsx"``), else None."""
    return next((part for part in new_names(raw) if not part.strip()), None)


def _probe(directory: str, failure: str, existing: bool = False, shown: str | None = None) -> None:
    """Make and remove a hidden folder in ``directory``: root passes every access test, so a special file system
    (/sys) that refuses new entries is found here, before the load, not by the write after the comparison
    (exit 1 then). Raises ``UsageError``: ``failure`` (the output directory, ``existing``, or the one that cannot
    be created in ``directory``) and the reason. A reason other than a refused write is said as such: ``-o /proc``
    read "is not writable: No such file or directory" (procfs answers every new entry so). ``shown``: ``directory``
    as the message names it (``_as_written``)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{FILE_PREFIX}", suffix=".tmp", dir=directory))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno in _NOT_WRITABLE:
            raise UsageError(f"{failure}{' is not writable' if existing else ''}: {reason}") from None
        holder = "" if existing else f" {shown or term_safe(directory)}"
        raise UsageError(f"{failure}{':' if holder else ''}{holder} cannot hold new files (creating one in it "
                         f"fails: {reason})") from None


def check_room(directory: str, where: str, aside: str = "") -> None:
    """Refuse an output ``directory`` (or, not there yet, the nearest existing folder above it) whose file system
    has no free block left: a full disk was found only by the write, after the whole compare (exit 1 then). One
    ``statvfs`` call, before the compare (``deliver.check_target``): no trial write, and a disk that fills during
    the compare is still found by the write itself. Root may write the blocks the file system reserves for it
    (``f_bfree``), anyone else only ``f_bavail``. ``where``: the folder as the messages name it; ``aside``: what
    the brackets after it hold ("the current directory"), to which the nearest existing folder is added (two
    brackets in a row read as two things named). Nothing is said where the system cannot tell (no ``statvfs``:
    Windows; a folder it cannot ask)."""
    folder = directory
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
    try:
        fs = os.statvfs(folder)
    except (AttributeError, OSError, ValueError):
        return
    free = fs.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else fs.f_bavail
    if free <= 0 < fs.f_blocks:  # f_blocks 0: a file system that counts no blocks (procfs), which the probe judges
        held = [aside] if aside else []
        if folder != directory:
            held.append(f"its nearest existing folder, {term_safe(folder)}")
        said = f"{where} ({'; '.join(held)})" if held else where
        raise UsageError(f"output directory {said}: no space left on its file system (0 bytes free); free "
                         "some space or write the reports elsewhere")


def _suffixed(stem: str, i: int) -> str:
    """The ``i``-th name ``publish_together`` tries for a taken ``stem``: ``stem``, ``stem_1``, ..."""
    return stem if i == 0 else f"{stem}_{i}"


def first_free_name(directory: str, name: str, *also: str) -> str:
    """``name``, or the first of its ``_1``, ``_2``, ... forms that is free (what publishing would take); with
    ``also`` (other extensions, as ``.json``), the first whose stem is free with each of them too, as
    ``publish_together`` takes one stem for the xlsx and JSON of a run."""
    stem, ext = os.path.splitext(name)
    i = 0
    while any(os.path.lexists(os.path.join(directory, _suffixed(stem, i) + e)) for e in (ext, *also)) \
            and i < MAX_SUFFIX:
        i += 1
    return _suffixed(stem, i) + ext


def shared_without_sticky_bit(path: str) -> bool:
    """A directory every user may write to, without the sticky bit that stops them from renaming or deleting
    entries they do not own (/tmp has it): there anyone could swap a report's temporary file or folder for a
    link while it is written and make this run write or delete a file of their choosing. The original refuses
    every group- or other-writable output directory without --force; a sticky one (/tmp) is safe, and a
    group-writable one is accepted: with a umask of 002 (user private groups, the default of many
    distributions) every folder a user makes is group-writable, for a group of one. POSIX modes only."""
    if os.name == "nt":
        return False
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IWOTH) and not mode & stat.S_ISVTX


def make_dir(path: str) -> list[str]:
    """Create a missing output directory (and parents) with mode 0o750, whatever the umask; returns the
    directories it created, deepest first (so a failed write can remove them again)."""
    if os.path.isdir(path):
        return []
    missing = []
    p = path
    while p and not os.path.exists(p):
        missing.append(p)
        p = os.path.dirname(p)
    try:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        for d in missing:
            os.chmod(d, DIR_MODE)
    except OSError as exc:
        _remove_empty(missing)
        raise ProfileError(path, f"cannot create output directory: {exc.strerror or exc}") from None
    return missing


def _remove_empty(directories: list[str]) -> None:
    """Remove directories this run created (deepest first) if they are still empty."""
    for d in directories:
        _quietly(os.rmdir, d)


def publish_together(files: list[tuple[str, str]], directory: str, stem: str) -> list[str]:
    """Publish finished temporary files ``(tmp, ext)`` as ``stem + ext`` each, under the first of
    ``stem``, ``stem_1``, ... that is free for all of them: reports written together keep one name
    even when another run publishes into the same directory at the same moment (each name is taken
    with an atomic hard link; a set that cannot be completed is given back and the next one tried)."""
    with _signals_deferred():  # a set is published whole or not at all, even on Ctrl-C / SIGTERM
        for i in range(MAX_SUFFIX):
            cand = _suffixed(stem, i)
            taken: list[tuple[str, str, bool]] = []  # (tmp, final, moved: tmp is gone, final holds it)
            complete = False
            try:
                for tmp, ext in files:
                    final = os.path.join(directory, cand + ext)
                    try:
                        os.link(tmp, final)
                        taken.append((tmp, final, False))
                        continue
                    except FileExistsError:
                        break
                    except OSError:  # no hard links here (FAT, exFAT, some network mounts): reserve, then move
                        pass
                    try:
                        os.close(os.open(final, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
                    except FileExistsError:
                        break
                    try:
                        os.replace(tmp, final)
                    except BaseException:
                        _quietly(os.unlink, final)  # our empty reservation
                        raise
                    taken.append((tmp, final, True))
                else:
                    complete = True
                    return [final for _, final, _ in taken]
            finally:
                if not complete:  # a name taken, an error or a signal: give the partial set back
                    for tmp, final, moved in taken:
                        if moved:
                            _quietly(os.replace, final, tmp)
                        else:
                            _quietly(os.unlink, final)
        raise ProfileError(directory, f"too many existing files named {stem}_N")


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C / SIGTERM / SIGHUP back for a few system calls: they are recorded and raised again
    right after, when the set of published files is complete or given back, never in between.
    (Python-level handlers, not a signal mask: the kernel may hand a process signal to any thread,
    e.g. one numpy's BLAS started, and Python still runs the handler in the main thread.)"""
    pending: list[int] = []
    try:
        with _handlers(("SIGINT", "SIGTERM", "SIGHUP"), lambda signum, _frame: pending.append(signum)):
            yield
    finally:
        for sig in dict.fromkeys(pending):
            signal.raise_signal(sig)  # now handled as it would have been (SystemExit, KeyboardInterrupt, ...)


@contextmanager
def _handlers(names: tuple[str, ...], handler: Callable[[int, Any], None], only_default: bool = False
              ) -> Iterator[None]:
    """``handler`` for the named signals this platform has, the previous handlers restored on exit.
    Only in the main thread, where Python can install handlers; ``only_default`` leaves a signal alone
    that has a handler of its own (an application's)."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for name in names:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                if not only_default or signal.getsignal(sig) in (signal.SIG_DFL, None):
                    previous[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, signal.SIG_DFL if old is None else old)


def _quietly(op: Callable[..., None], *paths: str) -> None:
    """A cleanup step that must not hide the error being handled."""
    try:
        op(*paths)
    except OSError:
        pass


class Terminated(SystemExit):
    """SIGTERM / SIGHUP while a report is written: status 128 + the signal, as a shell reports a process the signal
    stopped (which it does not say of one that exits): ``signum`` lets the CLI say it in its one line."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into SystemExit (``Terminated``) while writing so ``finally`` removes the temp file.

    Only default handlers are replaced (an application's own handlers are left
    alone), and only in the main thread, where Python can install handlers.
    """
    def handler(signum: int, _frame: Any) -> None:
        raise Terminated(signum)

    with _handlers(("SIGTERM", "SIGHUP"), handler, only_default=True):
        yield


def remove_stale_temporaries(directory: str, now: float | None = None) -> int:
    """Delete our own hidden temporary reports that a killed run left behind; returns how many.

    Only entries named ``.performance_comparison_result_*.tmp`` (the private folder a report is rendered in,
    the workbook writer's ``*.parts.tmp`` folder, or a file of an older version), owned by this user and
    untouched for ``STALE_TMP_SECONDS`` are removed, so a run writing right now, or another user's entry, is
    never disturbed.
    """
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for e in entries:
        if not (e.name.startswith(f".{FILE_PREFIX}") and e.name.endswith(".tmp")):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if now - st.st_mtime <= STALE_TMP_SECONDS:
                continue
            if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
                continue  # another user's (or put there by one): never ours to delete
            if e.is_file(follow_symlinks=False):
                os.unlink(e.path)
                removed += 1
            elif e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
                removed += 1
        except OSError:
            continue
    if removed:
        logging.getLogger("msprof-analyze").info(
            "Removed %s temporary report file(s) or part folder(s) left in %s by an interrupted run.", f"{removed:,}",
            directory)
    return removed


def write_new_file(directory: str, name: str, fill: Callable[[str], None], what: str, *, create: bool = True) -> str:
    """Create ``directory/name`` (or a suffixed name) from ``fill(temp_path)``; returns the path.

    ``fill`` writes the whole report into the temporary path it is given. The directory is created
    when missing (and removed again when nothing could be written), unless ``create`` is False
    (``write_new_files``). On any failure, signal or interrupt the temporary file is removed and nothing is
    published; an ``OSError`` becomes a one-line ``ProfileError`` naming the directory and ``what``.
    """
    stem, ext = os.path.splitext(name)
    return write_new_files(directory, stem, [(ext, fill, what)], create=create)[0]


#: One file of a report set: (extension, fill(temp path), what it is, for error messages).
Part = tuple[str, Callable[[str], None], str]


def write_new_files(directory: str, stem: str, parts: list[Part], *, create: bool = True) -> list[str]:
    """``write_new_file`` for files that belong together (the xlsx and JSON of one run): all are
    rendered first, then published under one shared stem (``publish_together``).

    ``create`` False: the directory holds reports this run wrote already (a rank-by-rank compare's later ranks
    and overview), so where it is gone it was removed (or renamed) meanwhile: ``FolderGone``, not a new folder
    that would hold the later reports alone and an overview naming files it lacks. No check before the write: the
    private folder's creation in it fails (ENOENT), so no removal between a check and the write is missed.

    The files are rendered inside a private folder (mode 0700) beside their final names; the output directory
    is one no other user can rename entries in (``output_target`` refuses a world-writable one without the
    sticky bit unless ``--force``), so the folder's name keeps naming it. Each file is flushed to disk (fsync)
    before it is published, so a crash or power loss cannot leave a final name holding an empty or partial
    report, and a delayed write error is reported instead of a success. The folder is flushed once more after
    publishing (``_sync_directory``): not for that guarantee (an unflushed name is lost whole, never partial) but
    so that a report the run says it wrote is still there after a power loss (~0.2-5 ms a write).
    """
    created = make_dir(directory) if create else []
    remove_stale_temporaries(directory)
    private = ""
    what = "report"  # the file being written, for the error message
    published = False
    try:
        with terminate_as_exit():
            private = tempfile.mkdtemp(prefix=f".{FILE_PREFIX}", suffix=".tmp", dir=directory)
            tmps = []
            for ext, fill, part_what in parts:
                what = part_what
                tmp = os.path.join(private, f"report{ext}")
                tmps.append(tmp)
                fill(tmp)
                os.chmod(tmp, FILE_MODE)
                _sync(tmp)
            what = " and ".join(p[2] for p in parts)
            paths = publish_together([(t, p[0]) for t, p in zip(tmps, parts, strict=True)], directory, stem)
            published = True
            _sync_directory(directory)
            return paths
    except OSError as exc:
        if not create and isinstance(exc, FileNotFoundError) and not os.path.isdir(directory):
            raise FolderGone(directory) from None
        raise ProfileError(directory, f"cannot write the {what}: {exc.strerror or exc}") from None
    except OutOfMemory:
        raise
    except MemoryError:
        raise OutOfMemory(directory, f"writing the {what}") from None
    finally:
        if private:
            _remove_private(private)
        if not published:
            _remove_empty(created)


class FolderGone(ProfileError):
    """The output folder a run wrote reports into is gone when it writes more (``write_new_files``' ``create``
    False): removed or renamed meanwhile, with the reports in it."""

    def __init__(self, directory: str) -> None:
        super().__init__(directory, "the output folder is gone: removed (or renamed) while the run wrote its reports "
                                    "there, with those written before; it is not made again",
                         hint="run again into a folder left alone until the run ends")


def _remove_private(private: str) -> None:
    """Remove the private folder and what is left in it (a file moved to its final name is gone already). What
    cannot be removed (e.g. a file held open by a sync tool on Windows) a later run removes once stale."""
    try:
        shutil.rmtree(private)
    except OSError as exc:
        logging.getLogger("msprof-analyze").debug("cannot remove %s: %s", private, exc)


def _sync(path: str) -> None:
    """Flush a file's data to disk (Windows needs a writable descriptor for that)."""
    fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_directory(directory: str) -> None:
    """Flush the new names to disk, so that the reports the run names as written survive a power loss (a name not
    yet on disk is lost whole: the files' own fsync keeps it from being partial). Best effort: the reports are
    published by now, and a folder that cannot be opened (write-only "drop box" folders, Windows) or synced (some
    file systems) changes nothing about them."""
    if os.name == "nt":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def closed_pipe(exc: OSError) -> bool:
    """The reader of our output stopped early (``| head``, a jq that exits). Windows often reports a
    write to a closed pipe as EINVAL instead of EPIPE (CPython issue 79935)."""
    return isinstance(exc, BrokenPipeError) or (os.name == "nt" and exc.errno == errno.EINVAL)


def discard_rest(stream: TextIO) -> None:
    """After BrokenPipeError (``| head``, a jq that exits): point the stream's descriptor at
    /dev/null, so what is still buffered (flushed at exit) goes nowhere instead of failing again."""
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
