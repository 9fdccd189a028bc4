"""Input path checks (reference-1 §2.4 / §2.5), run before any file is opened.

Why: a profile path comes from the command line and is then read in full, so
we refuse what the original refused (over-long paths, symbolic links, files
that do not belong to the user or that others may write, oversized files)
with one clear message that names the file, instead of failing later with an
``OSError`` or running out of memory.

Deliberate differences from the original (see docs/differences.md):

* Characters: the original accepts only ``[.:\\/_-\\s~0-9a-zA-Z]`` and CJK; real
  run directories routinely contain ``+``, ``@``, ``#``, ``,`` or non-Chinese
  letters, and a path is never passed to a shell, so we only refuse control
  characters (they cannot be typed into a file name safely and would corrupt
  the one-line error message and the sheet headers).
* Size caps refuse the file (``ProfileError``) instead of silently reading a
  too-large CSV/JSON as empty.

The caps are module constants read at call time, each overridable through an
environment variable (``MSPROF_COMPARE_MAX_TRACE_BYTES``,
``MSPROF_COMPARE_MAX_TEXT_BYTES``, ``MSPROF_COMPARE_MAX_DB_BYTES``), so tests
can exercise them with small files.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import TYPE_CHECKING

from ..errors import ProfileError
from ..textsafe import display, short_repr, term_safe

if TYPE_CHECKING:  # pragma: no cover
    from . import Layout

MAX_PATH_LEN = 4096
MAX_NAME_LEN = 255

#: Streamed trace JSON (Kineto file or trace_view.json).
MAX_TRACE_BYTES = 10 * 1024**3
#: Whole-file JSON side files (communication.json, metadata) and CSVs.
MAX_TEXT_BYTES = 5 * 1024**3
#: SQLite profiler database.
MAX_DB_BYTES = 8 * 1024**3

_ENV = {
    "trace": "MSPROF_COMPARE_MAX_TRACE_BYTES",
    "text": "MSPROF_COMPARE_MAX_TEXT_BYTES",
    "db": "MSPROF_COMPARE_MAX_DB_BYTES",
}

FORCE_HINT = "add --force to skip the owner, size and permission checks"
#: --force cannot make a path readable: what a user has to do instead
READ_HINT = "it needs read permission for you (chmod u+r), which --force cannot skip"
SEARCH_HINT = "a directory needs search permission to be read (chmod u+x), which --force cannot skip"
#: The names a profiler database is read under (a .db of another name is refused, naming them).
PROFILER_DB_NAMES = "ascend_pytorch_profiler_*.db, ascend_mindspore_profiler_*.db or msmonitor_*.db"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEP = re.escape(os.sep)

#: Side files of an ASCEND_PROFILER_OUTPUT directory that the text loader reads in every run, checked with the
#: trace before loading. The original's pre-check (reference-1 §2.4 "check_profiling_path") also checks
#: memory_record.csv, operator_memory.csv and communication.json, which only some comparisons read: the text
#: loader checks those when it reads them (``ascend_text._side_files``, as op_statistic.csv), so a run that does
#: not read one is not refused for it (docs/differences.md).
EVERY_RUN_SIDE_FILES = (
    ("kernel_details.csv", "text"),
)


def typed_path(given: str) -> str:
    """A path option as the original post-processes it: a leading ``=`` dropped (``-d=X`` spelt ``-d =X``), then
    ``~`` expanded; relative stays relative (the reports show it as typed)."""
    return os.path.expanduser(given.lstrip("="))


def given_path(given: str) -> str:
    """A user's input path as the loaders read it: ``typed_path``, made absolute."""
    return os.path.abspath(typed_path(given))


def goes_past_a_file(given: str) -> bool:
    """Whether the system refuses ``given`` for going on past a file (ENOTDIR: ``run.json/``, ``run.json/..``), which
    ``given_path`` hides: the absolute path drops a trailing ``/`` and folds ``.`` and ``..``."""
    try:
        os.stat(typed_path(given))
    except NotADirectoryError:
        return True
    except (OSError, ValueError):  # missing, unreadable, a NUL: other checks say which
        return False
    return False


def export_dir(path: str) -> str | None:
    """The profiling directory of an NPU export that file ``path`` is part of: the folder above its
    ASCEND_PROFILER_OUTPUT (``kernel_details.csv``, ``communication.json``), or its own folder where that holds
    one (``profiler_info_0.json``), so an error for a file passed by mistake names the input to pass. None
    otherwise."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) == "ASCEND_PROFILER_OUTPUT":
        return os.path.dirname(folder)
    return folder if os.path.isdir(os.path.join(folder, "ASCEND_PROFILER_OUTPUT")) else None


#: How many folders up from a refused input ``enclosing_export`` looks for the export it lies in: torch_npu's
#: deepest folders are ``PROF_*/device_N/data`` (3 levels under the profiling directory).
ENCLOSING_LEVELS = 4


def enclosing_export(path: str) -> str | None:
    """The NPU profiling directory (one holding ASCEND_PROFILER_OUTPUT) that ``path`` lies inside, up to
    ``ENCLOSING_LEVELS`` folders up: a sub-folder of an export (``PROF_*``, its ``device_0``, ``FRAMEWORK``) or a
    raw file in one was refused as holding nothing parsed, without naming the input to pass. None otherwise."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(ENCLOSING_LEVELS):
        if os.path.isdir(os.path.join(folder, "ASCEND_PROFILER_OUTPUT")):
            return folder
        up = os.path.dirname(folder)
        if up == folder:
            break
        folder = up
    return None


def typed_above(typed: str, folder: str) -> str:
    """``folder``, a folder above the input typed as ``typed``, as the user typed its part of the path
    (``run_ascend_pt`` of ``-d run_ascend_pt/PROF_1/device_0``), else relative to the current directory where that
    is shorter than its absolute path (typed from inside it), else absolute."""
    inside = os.path.relpath(given_path(typed), folder).split(os.sep)
    parts = typed_path(typed).rstrip(os.sep).split(os.sep)
    if len(parts) > len(inside) and parts[-len(inside):] == inside:
        head = os.sep.join(parts[:-len(inside)])
        if os.path.basename(head) not in ("", ".", "..", "~"):
            return head
    relative = os.path.relpath(folder)
    return relative if len(relative) < len(folder) else folder


def export_hint(path: str) -> str | None:
    """The hint of an error for file ``path`` of an NPU export given as an input (``export_dir``, or a raw file a
    few folders down in it: ``enclosing_export``): the input to pass instead; None for any other file."""
    export = export_dir(path) or enclosing_export(path)
    return f"a file of an NPU profiling export: pass the profiling directory it belongs to, {term_safe(export)}" \
        if export else None


#: Files only a MindSpore 1.x profiler folder holds (``framework_raw_<device>.csv``, ``step_trace_raw_...``).
MINDSPORE_LEGACY = re.compile(r"(framework_raw|step_trace_raw|output_op_compute_time)_[0-9]+.*\.(csv|txt)$")

#: What to do with MindSpore 1.x profiler data, which no comparison reads.
MINDSPORE_LEGACY_ADVICE = "profile with MindSpore 2.x, whose Profiler writes an *_ascend_ms folder, and pass that"


def mindspore_legacy_hint(path: str) -> str | None:
    """The hint of an error for a file of a MindSpore 1.x profiler folder given as an input (its side JSON objects,
    its .csv / .txt tables): "pass the profiling directory it belongs to" sent the user to a folder refused in
    its turn as MindSpore 1.x data. None where no file beside it is one only such a folder holds."""
    if MINDSPORE_LEGACY.match(os.path.basename(path)):
        return f"a MindSpore 1.x profiler file, which this comparison does not read: {MINDSPORE_LEGACY_ADVICE}"
    try:
        found = sorted(n for n in os.listdir(os.path.dirname(os.path.abspath(path))) if MINDSPORE_LEGACY.match(n))
    except OSError:
        return None
    if not found:
        return None
    return (f"a file of a MindSpore 1.x profiler folder ({term_safe(found[0])} beside it), which this comparison "
            f"does not read: {MINDSPORE_LEGACY_ADVICE}")


def size_cap(kind: str) -> int:
    """The byte limit for a file kind ("trace", "text" or "db"); the env var wins over the constant. A
    value that is no whole number of bytes is an error: ignoring it (as before) refused the very file
    the user had raised the limit for, with a message naming the old limit."""
    default = {"trace": MAX_TRACE_BYTES, "text": MAX_TEXT_BYTES, "db": MAX_DB_BYTES}[kind]
    raw = os.environ.get(_ENV[kind], "").strip()
    if not raw:
        return default
    if not raw.isascii() or not raw.isdigit():
        raise ProfileError(_ENV[kind], f"{short_repr(raw)} is not a whole number of bytes",
                           hint=f"e.g. {_ENV[kind]}={20 * 1024**3} for 20 GiB; unset it for {default}")
    digits = raw.lstrip("0")
    # more digits than int() takes (4,300) is no limit at all, as any cap beyond a file's size
    return int(digits or "0") if len(digits) <= 19 else 2**63


def check_size_caps(force: bool = False) -> None:
    """Every size-cap variable read up front: a malformed one is an error whichever kinds of file this pair
    has (it was one only when a file of its kind was read). ``--force`` reads no cap."""
    if not force:
        for kind in _ENV:
            size_cap(kind)


def check_access(path: str, name: str | None = None, is_dir: bool = True) -> None:
    """Read permission (and search permission for a directory), whatever --force says: it cannot grant them.
    Detection checks a directory it must list and look into up front: without them every file in it reads as
    missing, and detection would report data that "is not collected". Root passes these tests."""
    if not os.access(path, os.R_OK):
        raise ProfileError(name or path, "The path is not readable", hint=grant_hint(path, READ_HINT, "r"))
    if is_dir and not os.access(path, os.X_OK):
        raise ProfileError(name or path, "The path is not executable", hint=grant_hint(path, SEARCH_HINT, "x"))


def other_owner(path: str) -> str | None:
    """The owner of ``path`` (a name, else "uid N") where it is another user's, whose permission bits the user's
    chmod cannot change ("Operation not permitted"); None for the user's own, or where that cannot be told."""
    geteuid = getattr(os, "geteuid", None)
    try:
        uid = os.stat(path).st_uid
    except (OSError, ValueError):
        return None
    if geteuid is None or uid == geteuid():
        return None
    try:
        import pwd

        return term_safe(pwd.getpwuid(uid).pw_name)
    except (ImportError, KeyError):
        return f"uid {uid}"


def grant_hint(path: str, hint: str, bit: str) -> str:
    """``hint`` (chmod u+r / u+x) for a path of the user's own; for another user's, reached through --force, that
    chmod fails ("Operation not permitted"): its owner has to grant the permission, which the hint says."""
    owner = other_owner(path)
    if owner is None:
        return hint
    need = "read permission" if bit == "r" else "search permission (a directory needs it to be read)"
    return (f"it needs {need} for you, which --force cannot skip: it belongs to {owner}, who can grant it "
            f"(chmod o+{bit}, or g+{bit} for a group you are in)")


#: What to do about an error listing or reading a path other than a refused permission, by errno: a chmod
#: cannot help there, and "make it readable (chmod u+r)" was all the rank checks said.
_OS_ERROR_FIXES = {
    errno.EIO: "check the disk or mount it is on, where the read failed",
    errno.ELOOP: "mend the symbolic link in its path, which leads round in a loop",
    errno.ENAMETOOLONG: "move it to a shorter path: this one is longer than the system allows",
    errno.ESTALE: "remount the network share it is on: its handle went stale",
    errno.ENOTCONN: "remount the network share it is on: it is disconnected",
}


def os_error_fix(exc: OSError) -> str | None:
    """What to do about ``exc``, an error other than a refused permission (whose chmod ``grant_hint`` says), by
    what happened; None where its errno says nothing a user can act on."""
    return _OS_ERROR_FIXES.get(exc.errno or 0)


def _privileged() -> bool:
    """Owner/permission checks are skipped for root (as the original) and where there are no uids."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or geteuid() == 0


def check_text(given: str) -> None:
    """Length and character checks on the path string itself (no file system access)."""
    if _CONTROL.search(given):
        raise ProfileError(term_safe(given), "the path contains control characters")
    absolute = os.path.abspath(os.path.expanduser(given))
    if len(absolute) > MAX_PATH_LEN:
        raise ProfileError(term_safe(given[:80]) + "...", f"Length of input path exceeds the limit ({MAX_PATH_LEN})")
    for part in re.split(r"[/\\]", absolute):
        if len(part) > MAX_NAME_LEN:
            raise ProfileError(term_safe(given[:80]) + "...",
                               f"Length of input path exceeds the limit ({MAX_NAME_LEN} per name)")


def link_refused(name: str) -> ProfileError:
    """The refusal of a symbolic link without --force (the original's check), as every input check words it."""
    return ProfileError(name, "is a symbolic link; refusing to follow it", hint="add --force to accept it")


def check_input(path: str, force: bool, *, kind: str | None = None, shown: str | None = None) -> None:
    """Checks of one input file or directory that exists: link, owner, permissions, size.

    ``kind`` ("trace", "text", "db") selects the size cap of a file; None skips it.
    """
    name = shown or path
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise ProfileError(name, f"cannot access: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        if not force:
            raise link_refused(name)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise ProfileError(name, f"broken symbolic link: {exc.strerror or exc}") from None
    is_dir = stat.S_ISDIR(st.st_mode)
    if not is_dir and not stat.S_ISREG(st.st_mode):
        raise ProfileError(name, "is not a regular file or directory")
    checked = not force and not _privileged()
    if checked and st.st_uid != os.geteuid():
        raise ProfileError(name, "The path does not belong to you", hint=FORCE_HINT)
    check_access(path, name, is_dir)
    if checked and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ProfileError(name, "The path is writable by others", hint=FORCE_HINT)
    if kind and not is_dir and not force:
        cap = size_cap(kind)
        if st.st_size > cap:
            inflated = _gzip_stated(path, st.st_size) if kind == "trace" else 0
            said = f" ({inflated} decompressed, as its gzip trailer states)" if inflated > st.st_size else ""
            raise ProfileError(name, f"file is {st.st_size} bytes{said}, over the {cap} byte limit for this kind of "
                               "file", hint=f"add --force to read it anyway, or raise the limit with {_ENV[kind]}")


#: Deflate's largest expansion (about 1032:1): a gzip trailer claiming more is damaged.
GZIP_MAX_RATIO = 1032


def gzip_trailer_size(path: str, size: int) -> int | None:
    """The decompressed size a gzip file's trailer states (ISIZE: modulo 2**32 and the last member's only; a
    truncated file ends in other bytes), or None for what is no gzip by its magic bytes (``size``: the file's, from
    its stat). Opens the file: the caller has made sure it is a regular one. OSError propagates."""
    if size < 18:
        return None
    with open(path, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return None
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def _gzip_stated(path: str, size: int) -> int:
    """The decompressed size to quote in a trace's size-cap refusal (0: none): the cap applies to the decompressed
    trace too, so a refusal that gave only the compressed size sent the user to raise the cap above it, into a
    second refusal (the timesformer H100 trace: 1,218,740 bytes, 17,944,664 decompressed). A trailer past
    deflate's reach states no size (half the timesformer trace read "628869840"), so it is not quoted."""
    try:
        stated = gzip_trailer_size(path, size)
    except OSError:
        return 0
    return stated if stated is not None and stated <= GZIP_MAX_RATIO * size else 0


def check_layout(layout: Layout, force: bool) -> None:
    """Post-detection checks of every file a loader reads in any run (reference-1 §2.4 "check_profiling_path");
    the side files only some comparisons read are checked by the loader when it reads them."""
    # named as typed when it is the path given; a folder given for the one Kineto trace it holds has the trace
    # checked as profiling_path, and a problem of that file ("is a symbolic link") must not name the folder
    shown = layout.given if given_path(layout.given) == layout.profiling_path else None
    check_input(layout.profiling_path, force, shown=shown)
    if layout.trace_path and layout.trace_path != layout.profiling_path:
        check_input(layout.trace_path, force, kind="trace")
    elif layout.trace_path:
        check_input(layout.trace_path, force, kind="trace", shown=shown)
    if layout.db_path:
        check_input(layout.db_path, force, kind="db",
                    shown=layout.given if layout.db_path == layout.profiling_path else None)
    if layout.ascend_output and layout.ascend_output != layout.profiling_path:
        check_input(layout.ascend_output, force)
    if layout.info_path:
        check_input(layout.info_path, force, kind="text")
    if layout.ascend_output and not layout.db_path:
        for name, kind in EVERY_RUN_SIDE_FILES:
            side = os.path.join(layout.ascend_output, name)
            if os.path.lexists(side):
                check_input(side, force, kind=kind)
        # read at both directory levels: beside trace_view.json too when that folder itself is given
        meta = os.path.join(layout.profiling_path, "profiler_metadata.json")
        if os.path.lexists(meta):
            check_input(meta, force, kind="text")


def _typed_export_dir(typed: str) -> tuple[str, str] | None:
    """The profiling directory of an NPU export whose file ``typed`` names (``kernel_details.csv`` passed by
    mistake) and that directory as typed, the leading part of ``typed``: the hint naming the input to pass
    (``export_dir``) named it by its absolute path, the one path of the line the user had not typed. None where
    the input is no such file, or where ``typed`` holds no name of the directory (typed inside it: "." would
    name it), which keeps the absolute path."""
    absolute = given_path(typed)
    export = (export_dir(absolute) or enclosing_export(absolute)) if os.path.isfile(absolute) else None
    if export is None:
        return None
    inside = os.path.relpath(absolute, export).split(os.sep)  # ASCEND_PROFILER_OUTPUT/x.csv, or profiler_info_0.json
    parts = typed.split(os.sep)
    if len(parts) <= len(inside) or parts[-len(inside):] != inside:
        return None
    head = os.sep.join(parts[:-len(inside)])
    if os.path.basename(head.rstrip(os.sep)) in ("", ".", "..", "~"):
        return None  # typed from inside the export or right under it: no name of it to keep
    return export, head


class TypedPaths:
    """Names the files of two inputs as the user typed them: a message naming the absolute path of an input, or
    of a file found inside a typed directory (``run/ASCEND_PROFILER_OUTPUT/trace_view.json`` of ``-d run``),
    names it by the typed path (joined with the file's path inside it), so every message names a path the way
    the user can copy it back into the command line; before, some named the typed path and others the absolute.
    """

    def __init__(self, *given: str) -> None:
        pairs: dict[str, str] = {}
        self._eq: dict[str, str] = {}  # a path named as given with its leading "=": named without it
        for g in given:
            if not g or goes_past_a_file(g):  # `run.json/` is refused naming it: it names no file inside it
                continue
            typed = g[1:] if g.startswith("=") else g  # `-d =run`: the path is `run` (``given_path``)
            pairs.setdefault(given_path(g), typed)
            if typed != g:
                self._eq[g] = typed
        for g in given:  # after the inputs themselves, so that an input typed as a folder keeps its own name
            above = _typed_export_dir(g[1:] if g.startswith("=") else g) if g else None
            if above is not None:
                pairs.setdefault(*above)
        # a name that is not UTF-8 as a message holds it once shown (``display``, \xNN escapes): named as typed too,
        # in those escapes (the same-input warning named the absolute path where a UTF-8 name got the typed one)
        pairs.update({display(a): display(t) for a, t in list(pairs.items()) if display(a) not in pairs})
        # the longest first, so that of two nested inputs the inner one names its files
        self._typed = [t for a, t in sorted(pairs.items(), key=lambda p: -len(p[0])) if a != os.sep]
        alternatives = "|".join(f"({re.escape(a)})" for a in sorted(pairs, key=len, reverse=True) if a != os.sep)
        # an input's path where a path starts (not the tail of a longer one: `/mnt/x/run` names no file of `/x/run`),
        # then a separator (a file inside it) or the end of the path: `/x/run2`, `/x/run.json` are not inside `/x/run`
        self._re = re.compile(f"(?<![^\\s'\"(=:,;])(?:{alternatives})"
                              f"(?:({_SEP})|(?=$|[\\s:,;()'\"]|\\.(?:$|\\s)))") if alternatives else None

    def text(self, text: str) -> str:
        """``text`` with each absolute path of an input, or of a file inside one, named as typed."""
        if text in self._eq:
            return self._eq[text]
        return self._re.sub(self._sub, text) if self._re is not None and text else text

    def _sub(self, match: re.Match) -> str:
        typed = self._typed[next(i for i, g in enumerate(match.groups()[:-1]) if g is not None)]
        if match.groups()[-1] is None:  # the input itself
            return typed
        return typed if typed.endswith(os.sep) else typed + os.sep  # a file inside it follows
