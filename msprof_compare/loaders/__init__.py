"""Input detection and dispatch: a user path -> one loader -> a ``Profile``.

Detection follows reference-1 §2 (DB beats trace_view.json in a directory,
``analysis.db`` is never used, a ``.json`` is Kineto when its top level is an
object and an NPU trace_view when it is an array) plus our extensions: gzip
traces and a directory holding exactly one Kineto trace.
The kind of a JSON file is decided from its first bytes; the same bytes are
then decoded, so no file is read twice. A trace whose timestamps are floats
too large for float64 to hold to the ns (ns resolution at epoch scale, or a
trace_view.json with epoch times written as numbers where torch_npu writes
strings) keeps its time texts in that one decode (``traceio.RawTsEvent``:
Kineto ``ts``; ``traceio.RawTimesEvent``: an event list's ``ts`` and ``dur``).
A second, times-only pass (``traceio.exact_texts``) is left only for a trace
whose first float timestamp (first 64 KiB) gave no sign of such times, which
none of the samples is; a Kineto ``dur`` of that size needs none (it is read
as 0, over a week).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from ..errors import ProfileError
from ..gcpause import gc_paused
from ..model import Profile, SideNote, sided
from ..options import Options, neighbours_swapped
from ..textsafe import short_list, term_safe
from . import paths
from .heads import TraceHeads

DB_PREFIXES = ("ascend_pytorch_profiler", "ascend_mindspore_profiler", "msmonitor")
ASCEND_OUTPUT = "ASCEND_PROFILER_OUTPUT"
_INFO_RE = re.compile(r"profiler_info(_[0-9]+)?\.json$")
_TRACE_SUFFIXES = (".json", ".json.gz")
_KINETO_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")


@dataclass(frozen=True)
class Layout:
    """Where the files of one input are (reference-1 §2.1-2.2).

    ``level`` is "file" (Kineto file), "trace" (bare trace_view.json),
    "ascend_output" (an ASCEND_PROFILER_OUTPUT-like directory) or "profiling"
    (the ``*_ascend_pt`` / ``*_ascend_ms`` directory).
    """

    given: str                 # path as given by the user (shown in sheet headers)
    profiling_path: str        # absolute
    level: str
    trace_path: str = ""
    db_path: str = ""
    ascend_output: str = ""
    info_path: str = ""
    #: The profiler_info*.json of the export around an input given as its ASCEND_PROFILER_OUTPUT folder or its
    #: database in one (``export_settings_path``): read for the validity checks' settings note alone, as the
    #: original reads no profiler_info.json there.
    settings_path: str = ""


def _is_db_name(name: str) -> bool:
    return name.endswith(".db") and name.startswith(DB_PREFIXES)


#: JSON files of an Ascend export that are not Kineto traces (never offered as one).
_ASCEND_JSON = frozenset(("trace_view.json", "profiler_metadata.json", "communication.json",
                          "communication_matrix.json"))


def _kineto_candidates(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names
            if n.endswith(_TRACE_SUFFIXES) and os.path.isfile(os.path.join(directory, n))
            and not _INFO_RE.match(n) and n not in _ASCEND_JSON]


def detect(given: str, force: bool = False, heads: TraceHeads | None = None) -> Layout:
    """Classify a user path and check every file it leads to (``paths``). Raises ``ProfileError`` naming the path.
    ``heads``: the run's trace heads (``heads.TraceHeads``), which a folder's JSON files are told by; a new one
    where None."""
    paths.check_size_caps(force)
    if given:
        paths.check_text(given)
    layout = _classify(given, force, TraceHeads() if heads is None else heads)
    paths.check_layout(layout, force)
    return layout


def _kineto_object(path: str, heads: TraceHeads) -> bool:
    """Whether a JSON file may be a Kineto trace (a JSON object), from its first bytes: the other JSON files
    of profiling directories (MindSpore's legacy timelines, CANN's msprof timelines) are event lists, which
    hold no Kineto trace and would read as a profile of zeros. An empty or unreadable file counts: the
    loader names its problem."""
    return heads.of(path).first in ("{", "")


def _names_trace_events(path: str, heads: TraceHeads) -> bool:
    """Whether a JSON object's first 64 KiB hold the key ``"traceEvents"``, as a Kineto trace's do (its
    header before the events is a few KiB: device properties, versions). Used only for a folder of several
    JSON objects: a legacy MindSpore profiler folder holds pipeline / step / summary JSON objects that are
    no trace; one trace among them loads, and advising to pass a side object led to a second error."""
    return heads.of(path).trace_events


def folder_traces(directory: str, heads: TraceHeads | None = None) -> tuple[list[str], bool]:
    """The Kineto traces a folder holds, as a folder input is read (one of them: that trace is the input) and a
    rank's subfolder too: its ``*.pt.trace.json`` files (what torch.profiler names them; True), else its JSON
    objects when there is one (a trace exported under another name), else those whose head names ``traceEvents``
    (not side files such as a legacy MindSpore folder's timeline_summary_1.json: a Kineto trace is a JSON object,
    the other JSON files of profiling folders are event lists or no trace). Heads are read through ``heads``
    (a new ``TraceHeads`` where None)."""
    found = _kineto_candidates(directory)
    named = [f for f in found if f.endswith(_KINETO_SUFFIXES)]
    if named:
        return named, True
    heads = TraceHeads() if heads is None else heads
    objects = [f for f in found if _kineto_object(f, heads)]
    return (objects if len(objects) == 1 else [f for f in objects if _names_trace_events(f, heads)]), False


def _classify(given: str, force: bool, heads: TraceHeads) -> Layout:
    """Classify a user path (no permission or size checks)."""
    if not given:
        raise ProfileError(None, "The path is empty. Please enter a valid path.")
    _refuse_path_past_a_file(given)
    path = paths.given_path(given)
    if os.path.islink(path) and not force:
        raise paths.link_refused(given)
    if not os.path.exists(path):
        if os.path.islink(path):  # followed (--force) to nothing: "no such file or directory" named a path ls shows
            try:
                os.stat(path)
            except OSError as exc:  # a missing target, or a loop (ELOOP)
                raise ProfileError(given, f"broken symbolic link: {exc.strerror or exc}") from None
        # "-" names standard input in many tools (and -o - writes JSON there); a profile is a path
        stdin = "a profile is not read from standard input: pass its file or directory" if given == "-" else None
        raise ProfileError(given, "no such file or directory",
                           hint=stdin or _gz_twin_hint(given, path) or _near_name_hint(given, path))
    if os.path.isfile(path):
        name = os.path.basename(path)
        if name.endswith(".db"):
            if _is_db_name(name):
                return Layout(given, path, "file", db_path=path,
                              settings_path=export_settings_path(os.path.dirname(path)))
            raise ProfileError(given, _not_a_profiler_db(name))
        if name.endswith(_TRACE_SUFFIXES):
            return Layout(given, path, "file", trace_path=path)
        raise ProfileError(given, f"Invalid profiling path suffix: {name}", hint=_suffix_hint(name, path))
    if not os.path.isdir(path):
        raise ProfileError(given, "is neither a file nor a directory")

    paths.check_access(path, given)
    info = ""
    try:
        entries = os.listdir(path)
    except OSError as exc:
        raise ProfileError(given, f"cannot list directory: {exc.strerror or exc}") from None
    for n in sorted(entries):  # sorted, not listing order (the original's): the same folder reads the same
        if _INFO_RE.match(n):  # file on every machine
            info = os.path.join(path, n)
            break
    sub = os.path.join(path, ASCEND_OUTPUT)
    output = sub if os.path.isdir(sub) else path
    level = "profiling" if output != path else "ascend_output"
    if output != path:
        paths.check_access(output)
    try:
        out_entries = os.listdir(output)
    except OSError as exc:
        raise ProfileError(output, f"cannot list directory: {exc.strerror or exc}") from None
    dbs = sorted(n for n in out_entries if _is_db_name(n))
    if len(dbs) > 1:  # the original reads the first one listed: another rank's data on another machine
        raise ProfileError(output, f"holds {len(dbs)} profiler databases ({', '.join(term_safe(n) for n in dbs)})",
                           hint="pass the .db file to compare")
    settings = export_settings_path(path) if level == "ascend_output" else ""
    if dbs:
        return Layout(given, path, level, db_path=os.path.join(output, dbs[0]), ascend_output=output, info_path=info,
                      settings_path=settings)
    trace = os.path.join(output, "trace_view.json")
    if os.path.isfile(trace):
        return Layout(given, path, level, trace_path=trace, ascend_output=output, info_path=info,
                      settings_path=settings)
    if os.path.isfile(trace + ".gz"):  # compressed to save space: read like a .json.gz trace (spec README item 5)
        return Layout(given, path, level, trace_path=trace + ".gz", ascend_output=output, info_path=info,
                      settings_path=settings)
    stray: list[str] = []
    if output == path:
        found, named = folder_traces(path, heads)
        if found and os.path.basename(path) == ASCEND_OUTPUT and any(n in out_entries for n in _PARSED_FILES):
            # an export's own folder that lost its trace_view.json: the JSON trace beside its CSVs (a GPU run's, copied
            # in) is no part of it, and was compared in its place without a word, where the folder above it is refused
            stray, found = found, []
        if len(found) == 1:
            return Layout(given, found[0], "file", trace_path=found[0])
        if found:
            listing = ", ".join(term_safe(os.path.basename(f)) for f in found)
            what = (f"{len(found)} traces" if named else
                    f"no *.pt.trace.json but {len(found)} JSON trace{'s' if len(found) > 1 else ''}")
            raise ProfileError(given, f"directory holds {what} ({listing})", hint="pass the trace file itself")
    for cand in (trace, trace + ".gz"):  # there but unreadable: "not found" would send the user looking for it
        if os.path.lexists(cand):
            what = "a broken symbolic link" if os.path.islink(cand) and not os.path.exists(cand) else "not a file"
            raise ProfileError(cand, f"is {what}")
    if output == path:  # the export's folder under another case (a copy through a tool that changed it)
        other = sorted(n for n in out_entries if n.upper() == ASCEND_OUTPUT and os.path.isdir(os.path.join(path, n)))
        if other:
            raise ProfileError(path, f"holds {term_safe(other[0])}, not {ASCEND_OUTPUT}: the name is case-sensitive",
                               hint=f"rename it to {ASCEND_OUTPUT}")
    # the trace under another case (TRACE_VIEW.JSON: the same copy through such a tool): "holds the parsed
    # kernel_details.csv but no trace_view.json" or "not collected ... not parsed" sent the user looking for it
    cased = sorted(n for n in out_entries if n.lower() in _TRACE_NAMES and os.path.isfile(os.path.join(output, n)))
    if cased:
        raise ProfileError(output, f"holds {term_safe(cased[0])}, not {cased[0].lower()}: the name is case-sensitive",
                           hint=f"rename it to {cased[0].lower()}")
    nested = _nested_output_hint(output, out_entries)
    parsed = [n for n in _PARSED_FILES if n in out_entries]
    if parsed:  # parsed, but the one file the comparison reads first is missing (e.g. left out of a copy)
        which = "that file" if len(stray) == 1 else "one of them"
        other = (f"it holds {short_list([os.path.basename(f) for f in stray], 3)} too, no part of the export: pass "
                 f"{which} itself to compare it as a trace") if stray else None
        raise ProfileError(output, f"holds the parsed {', '.join(parsed)} but no trace_view.json or "
                                   "ascend_*_profiler_*.db, which the comparison needs",
                           hint=nested or other or "copy the directory with its trace_view.json, or export the profile "
                                                   "again")
    msprof = sorted(n for n in out_entries if n.startswith("msprof") and n.endswith(".db"))
    if msprof:
        raise ProfileError(output, f"holds {term_safe(msprof[0])}, {_not_a_profiler_db(msprof[0])}")
    raise ProfileError(output, "The data is not collected by PyTorch or Mindspore mode or the data is not parsed: "
                               "no trace_view.json, profiler *.db or *.pt.trace.json found",
                       hint=(_enclosing_export_hint(given, path) or _inner_profiles_hint(path, heads)
                             or _cann_runs_hint(path, given) or _timeline_files_hint(path, given)
                             or _mindspore_legacy_hint(path, out_entries) or _unparsed_hint(path, out_entries))
                       if output == path else nested)


def export_settings_path(folder: str) -> str:
    """The first (by name) profiler_info*.json of the export folder around ``folder`` where ``folder`` is its
    ASCEND_PROFILER_OUTPUT, else "": an export given as that folder or its database read no profiler settings, so
    the validity checks' note that two runs were recorded at different profiler levels (Level1 against Level2 of
    the msinsight exports) vanished from a run of the same exports given one folder down."""
    if os.path.basename(os.path.normpath(folder)) != ASCEND_OUTPUT:
        return ""
    above = os.path.dirname(os.path.normpath(folder))
    try:
        names = sorted(os.listdir(above))
    except OSError:
        return ""
    return next((os.path.join(above, n) for n in names if _INFO_RE.match(n) and os.path.isfile(os.path.join(above, n))),
                "")


def _enclosing_export_hint(given: str, path: str) -> str | None:
    """A sub-folder of an NPU export given as the input (its raw ``PROF_*`` data, a ``device_0`` in it, ``FRAMEWORK``):
    name the profiling directory it lies in, the input to pass; the line said only that nothing parsed was found
    (and, for a PROF_* folder, offered its CANN timeline files, which give no categories, memory or operators)."""
    export = paths.enclosing_export(path)
    if export is None:
        return None
    return f"it is a folder inside the NPU profiling directory {term_safe(paths.typed_above(given, export))}: pass that"


def _refuse_path_past_a_file(given: str) -> None:
    """Refuse a path that goes on past a file (``-bp run.json.gz/``, ``run.json.gz/.``, ``run.json.gz/..``), which
    the system refuses too (ENOTDIR: ``cat run.json/`` fails): the absolute path the loaders read drops a trailing
    ``/`` and folds ``.`` and ``..``, so such a path read the file (or its folder) without a word, where a trailing
    ``/`` usually means a folder was meant (a variable holding a folder's name, joined to the wrong one)."""
    if not paths.goes_past_a_file(given):
        return
    name = given.lstrip("=")  # as typed: `-d=run.json/` gives "=run.json/", which reads run.json/
    stem = name.rstrip("/" + os.sep)
    if stem != name and os.path.isfile(paths.typed_path(stem)):
        raise ProfileError(name, "is a file, not a directory: a path ending in '/' names a folder",
                           hint=f"pass the file without the '/': {term_safe(stem)}")
    raise ProfileError(name, "not a directory: the path goes on past a file, as through a folder")


def _nested_output_hint(output: str, entries: list[str]) -> str | None:
    """When the export's folder holds another ASCEND_PROFILER_OUTPUT with the trace or database in it (``cp -r`` of
    the folder onto a copy that already has one nests it there), say so: the line said the data was "not
    collected by PyTorch or Mindspore mode or not parsed", false of the export a level down. Its profiling folder
    (profiler_info, profiler_metadata.json) is the one above, so the files are to move up, not the inner folder to
    be passed. None where the folder holds no such copy."""
    if ASCEND_OUTPUT not in entries:
        return None
    try:
        inner = os.listdir(os.path.join(output, ASCEND_OUTPUT))
    except OSError:
        return None
    held = sorted(n for n in inner if _is_db_name(n) or n in _TRACE_NAMES)
    if not held:
        return None
    return (f"it holds {ASCEND_OUTPUT}{os.sep}{term_safe(held[0])} a level down, a copy nested in a folder of its "
            f"own name (as cp -r onto an existing {ASCEND_OUTPUT} makes): move that folder's files up into "
            f"{term_safe(output)}")


#: The names an export's trace is read under, lower case.
_TRACE_NAMES = ("trace_view.json", "trace_view.json.gz")


#: What torch_npu and MindSpore write beside trace_view.json in ASCEND_PROFILER_OUTPUT.
_PARSED_FILES = ("kernel_details.csv", "op_statistic.csv", "operator_memory.csv", "memory_record.csv",
                 "communication.json", "step_trace_time.csv")


#: What a downloaded or packed profile is often named: an archive, not a trace.
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip", ".7z")


def _gz_twin_hint(given: str, path: str) -> str | None:
    """A missing trace whose name differs from an existing file's by ``.gz`` only (``-bp run.json`` beside
    ``run.json.gz``, a compressed copy, or the reverse): name the file that is there, as the user typed the
    path, so the line says what to pass instead of sending the user looking. None otherwise."""
    for suffix in _TRACE_SUFFIXES:
        if given.endswith(suffix + ".gz"):
            twin, twin_path = given[:-3], path[:-3]
        elif given.endswith(suffix) and not given.endswith(".gz"):
            twin, twin_path = given + ".gz", path + ".gz"
        else:
            continue
        if os.path.isfile(twin_path):
            return f"did you mean {term_safe(twin)}? that file exists"
    return None


def _near_name_hint(given: str, path: str) -> str | None:
    """A missing input whose name is a near spelling of one its folder holds (difflib's ratio 0.8 or more: a letter
    left out, doubled or swapped, ``bert-smal_h100.json.gz``; or two neighbouring letters swapped, which the ratio
    misses in a short name, ``rnus`` for ``runs``): that name, as the path was typed, so the line says
    what to pass. None where a name there differs by digits alone (``rank2`` is no typo of ``rank1``, which would
    compare another rank, and the next nearest name is another run's) or the folder holds over 10,000 names (a
    typo need not cost their listing); a name that differs by ``.gz`` alone is ``_gz_twin_hint``'s, files only.
    A name typed with a trailing ``/`` (``run_ascnd_pt/``, a folder's name as completion writes it) is matched
    among the folders, and named with it. A typo higher up (``runs/bret/rank0_ascend_pt``, a job's folder two
    levels above its ranks) is the first missing name's: matched among the folders where it is missing, the path
    named with it mended, and where the rest is missing too, the folder that exists."""
    typed = given.lstrip("=")
    bare = typed.rstrip("/") or typed  # "/" alone names no folder's entry: no tail, no hint
    slash = typed[len(bare):]
    head, tail = os.path.split(bare)
    if not tail or tail != tail.strip():  # blanks around the name: the CLI says so (cli._blank_edges)
        return None
    missing = _first_missing(head)
    if missing is not None:
        above, name = missing
        match = _near_entry(name, os.path.dirname(paths.given_path(os.path.join(above, name))), True)
        if match is None:
            return None
        mended, rest = os.path.join(above, match), os.path.relpath(bare, os.path.join(above, name))
        whole = os.path.join(mended, rest) + slash
        there = "that exists" if os.path.exists(paths.typed_path(whole)) else f"{term_safe(mended)} exists"
        return f"did you mean {term_safe(whole)}? {there}"
    match = _near_entry(tail, os.path.dirname(path), bool(slash))
    return f"did you mean {term_safe(os.path.join(head, match) + slash)}? that exists" if match else None


def _first_missing(head: str) -> tuple[str, str] | None:
    """(the folder above, the name) of the first name of the typed folder path ``head`` that does not exist, as
    typed; None where ``head`` exists (or is empty: the current folder). Names are taken from the top down, so a
    ``..`` or ``~`` keeps its meaning."""
    if not head or os.path.exists(paths.typed_path(head)):
        return None
    above = ""
    for i, part in enumerate(head.replace(os.sep, "/").split("/")):
        here = os.path.join(above, part) if above or i else part or os.sep
        if part and not os.path.exists(paths.typed_path(here)):
            return above, part
        above = here
    return None


def _near_entry(name: str, folder: str, dirs_only: bool) -> str | None:
    """The entry of ``folder`` (a folder only, where ``dirs_only``) whose name is a near spelling of ``name``
    (``_near_name_hint``'s rules), else None."""
    import difflib

    try:
        with os.scandir(folder) as it:
            entries = [e for _, e in zip(range(10_001), it, strict=False)]
            names = [e.name for e in entries if not dirs_only or e.is_dir()]
    except OSError:
        return None
    if len(entries) > 10_000:
        return None
    digits = re.compile(r"\d+")
    numbered = digits.sub("#", name)
    if any(digits.sub("#", n) == numbered for n in names):  # h200 beside h100: the next nearest is another run
        return None
    near = [n for n in names if n not in (name + ".gz", name.removesuffix(".gz"))]
    match = difflib.get_close_matches(name, near, n=1, cutoff=0.8) or [n for n in near if neighbours_swapped(name, n)]
    return match[0] if match else None


def _suffix_hint(name: str, path: str) -> str:
    """Why a file name is refused: the suffix in upper case (``T.JSON.GZ``, a copy through another system), which
    is case-sensitive as in the original, an archive (``dlrm_kineto.tar.gz``), which must be unpacked, or a file of
    an NPU export (``kernel_details.csv`` in ASCEND_PROFILER_OUTPUT, what a user opens first), whose profiling
    directory, named here, is the input."""
    low = name.lower()
    if low.endswith((*_TRACE_SUFFIXES, ".db")):
        return "the suffix is case-sensitive: rename it to end in .json, .json.gz or .db in lower case"
    if low.endswith(_ARCHIVE_SUFFIXES):
        return "an archive: unpack it and pass the trace file, or the profiling directory, it holds"
    return (paths.export_hint(path) or paths.mindspore_legacy_hint(path)
            or "expected a *.json / *.json.gz trace, a profiler *.db or a profiling directory")


def _not_a_profiler_db(name: str) -> str:
    """Why a .db is refused, naming what it is when that is known."""
    expected = paths.PROFILER_DB_NAMES
    if name.startswith("msprof") and name.endswith(".db"):
        return f"a CANN msprof database, which is not supported (pass the {expected} export)"
    if name == "analysis.db":
        return f"not a profiler database (expected {expected}; analysis.db is not used)"
    return f"not a profiler database (expected {expected})"


def _inner_profiles_hint(directory: str, heads: TraceHeads) -> str | None:
    """When a parent of profiling directories is given (a cluster or multi-rank run, a TensorBoard log
    directory), name them: one rank is compared per side."""
    found, names = _profiling_dirs(directory, heads)
    where = ""
    if not found:  # a folder of runs, each a parent of ranks (msinsight's text/level0/rank0_ascend_pt): a level
        # down, by their path from the folder given; the folder read as holding nothing, without a word
        found = [os.path.join(n, m) for n in names[:_DEEPER_DIRS]
                 for m in _profiling_dirs(os.path.join(directory, n), heads)[0]]
        where = " a level down"
    if not found:
        return None
    listing = short_list(found, 4)
    hint = f"it holds profiling directories{where}: {listing}; pass one of them, one rank per side"
    if where:  # its subfolders of ranks are inputs too, on both sides: the hint named single ranks alone
        from .ranks import rank_inputs

        held = sorted({f.split(os.sep)[0] for f in found})
        folders = [n for n in held if rank_inputs(os.path.join(directory, n), heads)]
        if folders:
            hint += f"; or a folder of ranks on both sides, such as {term_safe(folders[0])}, to compare rank by rank"
    return hint


#: How many subfolders ``_inner_profiles_hint`` looks into for profiling directories a level down.
_DEEPER_DIRS = 64


def _profiling_dirs(directory: str, heads: TraceHeads | None = None) -> tuple[list[str], list[str]]:
    """The names of ``directory``'s profiling directories (*_ascend_pt / *_ascend_ms, one holding
    ASCEND_PROFILER_OUTPUT or a Kineto trace: ``_holds_trace``), and of all its subfolders, both sorted."""
    heads = TraceHeads() if heads is None else heads
    try:
        names = sorted(n for n in os.listdir(directory) if os.path.isdir(os.path.join(directory, n)))
    except OSError:
        return [], []
    found = [n for n in names if n.endswith(("_ascend_pt", "_ascend_ms"))
             or os.path.isdir(os.path.join(directory, n, ASCEND_OUTPUT))
             or _holds_trace(os.path.join(directory, n), heads)]
    return found, names


def _holds_trace(directory: str, heads: TraceHeads) -> bool:
    """Whether a subfolder holds a Kineto trace (``folder_traces``) that says so: a ``*.pt.trace.json`` or a JSON
    object whose head names ``traceEvents``. Not a side folder's lone JSON object (a ``configs/ds_config.json``
    beside the rank folders), which a folder input would take for its trace but which is no rank of the job."""
    traces, named = folder_traces(directory, heads)
    return named or any(_names_trace_events(t, heads) for t in traces)


def _timeline_files(directory: str) -> list[str]:
    """The msprof_*.json event lists of a CANN timeline folder, or of the PROF_* or device_N folder above it,
    by their path from ``directory``. Not one lane's files (hccl_*, task_time_*), nor a MindSpore
    *timeline_display_*.json, whose lanes give no device time (all zeros)."""
    from . import traceio

    try:
        devices = sorted(n for n in os.listdir(directory) if n.startswith("device_"))
    except OSError:
        devices = []
    folders = [".", "timeline", *(os.path.join(n, "timeline") for n in devices)]
    return [os.path.normpath(os.path.join(sub, os.path.basename(f))) for sub in folders
            for f in _kineto_candidates(os.path.join(directory, sub))
            if os.path.basename(f).startswith("msprof_") and traceio.first_char(traceio.head_bytes(f, 64)) == "["]


def _timeline_files_hint(directory: str, given: str) -> str | None:
    """When the folder is a CANN timeline folder, name its msprof_*.json event lists: such a file compares
    given alone (its device lanes are read), the folder does not. The CANN run's PROF_* folder and its device_N
    folders hold them a level or two down (device_N/timeline/), which otherwise read as holding nothing parsed.
    Each is named by the folder as typed joined with its path from there (``_typed_join``)."""
    found = _timeline_files(directory)
    if not found:
        return None
    listing = short_list([_typed_join(given, f) for f in found], 4)
    return f"it holds timeline files: {listing}; pass one of them"


_MINDSPORE_LEGACY = paths.MINDSPORE_LEGACY


def _mindspore_legacy_hint(directory: str, names: list[str]) -> str | None:
    """When the folder is a MindSpore 1.x profiler's (MindInsight's format), or the summary folder holding it as
    ``profiler/`` (what MindInsight is pointed at), say so: the original's "not collected by PyTorch or Mindspore
    mode" alone left a MindSpore user with data that is MindSpore's to guess what is wrong. Its timelines give no
    device time this comparison reads (reference pair 9c: all zeros), so no file is offered."""
    found = sorted(n for n in names if _MINDSPORE_LEGACY.match(n))
    what = "it is a MindSpore 1.x profiler folder"
    if not found:
        try:
            found = sorted(f"profiler{os.sep}{n}" for n in os.listdir(os.path.join(directory, "profiler"))
                           if _MINDSPORE_LEGACY.match(n))
        except OSError:
            return None
        what = "it holds a MindSpore 1.x profiler folder"
    if not found:
        return None
    return f"{what} ({term_safe(found[0])}), which this comparison does not read: {paths.MINDSPORE_LEGACY_ADVICE}"


def _unparsed_hint(directory: str, entries: list[str]) -> str | None:
    """A torch_npu or MindSpore profiling folder recorded without parsing (``analyse`` off, dynamic_profile's
    default): the profiler's raw PROF_* data and no ASCEND_PROFILER_OUTPUT. "or the data is not parsed" left the
    user to guess which and how to parse it."""
    raw = sorted(n for n in entries if n.startswith("PROF_") and os.path.isdir(os.path.join(directory, n)))
    if not raw:
        return None
    return (f"it holds the profiler's raw data, {short_list(raw, 2)}, but no {ASCEND_OUTPUT}: the profile was "
            "recorded without parsing; parse it offline (torch_npu: torch_npu.profiler.profiler.analyse(FOLDER); "
            "MindSpore: its Profiler's offline analyse), then pass this folder")


def _typed_join(given: str, inside: str) -> str:
    """``inside``, a path inside the folder the user typed as ``given``, as a path that works from where they ran
    the command: the hints named ``device_0/timeline/msprof_0_2_1.json``, from the folder given, which pasted
    back as an input was not found (the rank and kernel_details.csv hints name paths to paste)."""
    return os.path.join(paths.typed_path(given), inside)


def _cann_runs_hint(directory: str, given: str) -> str | None:
    """When the folder holds CANN runs (PROF_* folders with timeline files, as MindInsight's profiler folder
    does), name them and say that one is chosen: their timeline files, a side each, compare; the folder read as
    holding nothing parsed, without a word of what to pass. A single run's files are named as for its own
    folder; each path starts with the folder as typed (``_typed_join``)."""
    try:
        names = sorted(n for n in os.listdir(directory)
                       if n.startswith("PROF_") and os.path.isdir(os.path.join(directory, n)))
    except OSError:
        return None
    runs = [(n, files) for n in names if (files := _timeline_files(os.path.join(directory, n)))]
    if not runs:
        return None
    if len(runs) == 1:
        name, files = runs[0]
        named = [_typed_join(given, os.path.join(name, f)) for f in files]
        return f"it holds timeline files: {short_list(named, 4)}; pass one of them"
    example = _typed_join(given, os.path.join(runs[0][0], runs[0][1][0]))
    return (f"it holds {len(runs)} CANN PROF_* folders: {short_list([_typed_join(given, n) for n, _ in runs], 4)}; "
            f"choose one and pass one of its timeline files, such as {term_safe(example)}")


def load_profile(given: str, opts: Options, step: int = -1, layout: Layout | None = None) -> Profile:
    """Detect and load one input with the loader of its family.

    ``step`` is this side's ``--base_step``/``--comparison_step`` (-1: all data);
    only the DB loader uses it, because in DB mode the step limits every query.
    ``layout``: ``detect(given, opts.force)`` when the caller has it already (``api.compare`` detects both
    inputs before loading; a second detection re-checked every file of a directory, ~0.4 ms).
    The load runs with the cyclic GC paused (``gc_paused``), as the decode and the comparators do: between the
    decode's paused steps a GC pass walked the lists of millions of decoded events (the 1 GB timesformer pair: three
    young-generation passes inside the loads, 0.61 s at load average 9; the passes after them grew from 0.03 to
    0.12 s), and a load leaves next to no cyclic garbage (under 50 objects on the samples)."""
    with gc_paused():
        profile = _load_profile(given, opts, step, layout)
    # every note names its side where the API logs it (``sided``): two inputs whose paths differ by a digit (rank 0
    # against rank 1 of one job) gave two lines of a CSV, a trace or a DB that did not say which side each was about
    profile.warnings = [w if isinstance(w, SideNote) else sided(w) for w in profile.warnings]
    return profile


def _load_profile(given: str, opts: Options, step: int, layout: Layout | None) -> Profile:
    if layout is None:
        layout = detect(given, opts.force)
    if layout.db_path:
        from . import ascend_db

        return ascend_db.load(layout, opts, step=step)
    if layout.level == "file":
        from . import traceio

        data = traceio.read_bytes(layout.trace_path, opts.force)
        kind = traceio.first_char(data)
        if kind == "[":
            from . import ascend_text

            handed = [data]  # the loader frees the bytes once decoded (``ascend_text.load``)
            del data
            return ascend_text.load(replace(layout, level="trace"), opts, data=handed)
        from . import kineto

        return kineto.load(layout, opts, data=data)
    from . import ascend_text

    return ascend_text.load(layout, opts)
