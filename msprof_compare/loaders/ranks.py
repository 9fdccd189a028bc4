"""Rank discovery: a folder holding one profile per rank of a multi-rank job -> {rank id: input path}.

The rank is what the profiler recorded, never a file or folder name a user may have changed: an NPU profiling
directory's ``profiler_info_N.json`` (torch_npu and MindSpore write ``profiler_info_{rank}.json`` for a
distributed run, its ``rank_id`` key and the DB export's ``ascend_*_profiler_{rank}.db`` agree with it, and so
does the DB's META_DATA, checked once its rank's compare loads it: ``check_db_rank``), a
Kineto trace's ``distributedInfo.rank``, read from the first 64 KiB, else the last (the compare decodes the trace
once, later).
A trace's head is read once per run: the run's ``heads.TraceHeads``, passed along to the compares' detection.
A folder whose subfolders are folders of ranks is a multi-node job: its ranks are all its node folders' (one level
down; ``rank_inputs``), rank ids being numbered across nodes.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import zlib

from ..errors import ProfileError, side_named
from ..model import Profile, sided
from ..textsafe import short_list, short_repr, short_text, term_safe
from ..units import MAX_RANK, RankCycle, Unit, named_units
from . import _INFO_RE, ASCEND_OUTPUT, _is_db_name, _kineto_candidates, _profiling_dirs, folder_traces
from .heads import PROBE_BYTES, TraceHeads
from .paths import (
    READ_HINT,
    SEARCH_HINT,
    given_path,
    grant_hint,
    gzip_trailer_size,
    link_refused,
    os_error_fix,
    other_owner,
)

#: How much of a Kineto trace's head, and else its tail, is read for its ``distributedInfo`` (before
#: ``traceEvents``, or after them).
HEAD_BYTES = PROBE_BYTES
#: A side file read for a rank id larger than this is not one the profiler wrote: its rank is not read.
_SIDE_FILE_BYTES = 1 << 20
_NUMBERED = re.compile(r"_([0-9]+)\.(json|db)$")
#: A rank a Kineto trace's name or folder carries, as users name them (tensorboard_trace_handler's worker_name:
#: ``rank3``, ``rank_3``, ``rank-3``; hta's ``rank-34.Jul_15_10_52_41.1074.pt.trace.json``, TraceLens'
#: ``capture_trace_rank_0.json.gz``): "rank" after no letter (not ``frank1``), its digits up to the next non-digit.
_NAME_RANK = re.compile(r"(?<![a-z])rank[-_]?([0-9]{1,10})(?![0-9])", re.IGNORECASE)

log = logging.getLogger("msprof-analyze")


def rank_inputs(directory: str, heads: TraceHeads | None = None, nodes: bool = True) -> list[str] | None:
    """The rank inputs ``directory`` holds (profiling directories, Kineto trace folders, trace files), sorted by
    name; None where ``directory`` is no folder or is one input itself (an NPU export, a folder of one trace and no
    subfolder holding a profile),
    [] where it holds no input. A Kineto subfolder holding a schedule's cycles (``_subfolder_cycles``) gives its
    traces, each an input, as a folder of ranks holds an NPU rank's cycles side by side. With ``nodes``, a
    subfolder that is itself a folder of ranks (a multi-node job's ``node1/``: ``_node_inputs``) gives its ranks'
    inputs too, one level down only. Only names and the first bytes of JSON files are read, through ``heads`` (the
    run's; a new ``TraceHeads`` where None)."""
    if not os.path.isdir(directory):
        return None
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    if (ASCEND_OUTPUT in names or "trace_view.json" in names or "trace_view.json.gz" in names
            or any(_is_db_name(n) for n in names)):
        return None
    heads = TraceHeads() if heads is None else heads
    traces = folder_traces(directory, heads)[0]
    subfolders, folders = _profiling_dirs(directory, heads)
    ranks = _rank_traces(directory, heads)
    held, lone = _node_inputs(directory, subfolders, folders, bool(ranks), heads) if nodes else ({}, None)
    _refuse_unlisted_ranks(directory, subfolders + sorted(held), folders, ranks, lone, nodes=set(held))
    subfolders = [n for n in subfolders if n not in held]
    # a folder of one trace is that trace's input, as ``loaders.detect`` takes it (beside an empty rank1_ascend_pt
    # too); not where profiles of ranks lie in subfolders beside it (rank 0's trace in the folder, rank 1's in rank1/,
    # or rank0_ascend_pt, rank1_ascend_pt and a stray trace): two such folders compared their top traces alone, rank 0
    # against rank 1 of the other say, the subfolders' ranks left out without a word
    if len(traces) == 1 and len(ranks) <= 1 and not held and not any(
            _holds_profile(os.path.join(directory, n), heads) for n in subfolders):
        return None
    traces = ranks
    found = [path for inputs in held.values() for path in inputs]
    for name in subfolders:
        path = os.path.join(directory, name)
        found += _subfolder_cycles(path, heads) or [path]
    return sorted(found + traces)


def _node_inputs(directory: str, subfolders: list[str], folders: list[str], traces: bool,
                 heads: TraceHeads) -> tuple[dict[str, list[str]], str | None]:
    """{name: its rank inputs} of ``directory``'s subfolders that are folders of ranks themselves (``rank_inputs``,
    looking no deeper): the nodes of a multi-node job (``job/node0/rank0_ascend_pt ... job/node1/rank8_ascend_pt``,
    or ``node0/`` holding one Kineto trace per rank), whose ranks the job's are, as ranks are numbered across nodes
    (``discover`` refuses one held twice, naming both). Not a profiling directory, nor a Kineto subfolder of one
    worker's cycles (``_subfolder_cycles``: one rank's). A subfolder holding Kineto traces of its own, beside rank
    inputs of the folder's own (``traces`` in it, a profiling directory, a subfolder of one trace or of cycles), is
    a node only where each of its traces' heads records another rank (``_distinct_ranks``: node0/ of ranks 0 and 1
    beside node1/ of rank 2 alone); else it is a rank's folder holding two traces, which ``input_rank`` refuses
    (worker0/ holding its trace and a stray one beside worker1/). Where the folder holds no input of its own, two
    or more: the loader's "holds profiling directories a level down" hint named one node folder to pass, the job's
    other nodes left out; one alone is a folder around a folder of ranks (msinsight's st/ around level2/), which
    that hint names. Given with None for a job of nodes; for one alone, {} with its name, which the refusals'
    hints name to pass where moving a sibling out left that folder, refused in turn."""
    held = {}
    direct = traces
    for name in folders:
        path = os.path.join(directory, name)
        if name.endswith(("_ascend_pt", "_ascend_ms")) or os.path.isdir(os.path.join(path, ASCEND_OUTPUT)):
            direct = direct or name in subfolders
            continue
        if name in subfolders:  # a rank's folder of one trace (the usual Kineto layout: no second look) or cycles
            inside = folder_traces(path, heads)[0]
            if (len(inside) > 1 and _one_worker(inside)) or (len(inside) == 1 and not _has_subfolder(path)):
                direct = True
                continue
        if inputs := rank_inputs(path, heads, nodes=False):
            held[name] = inputs
        else:
            direct = direct or name in subfolders
    held = {name: inputs for name, inputs in held.items()
            if not (direct and name in subfolders and not _distinct_ranks(inputs, heads))}
    if held:
        _refuse_empty_nodes(directory, subfolders, folders, held, heads, alone=not direct and len(held) == 1)
    # one folder of ranks alone is no job of nodes but a folder around one (msinsight's st/ around level2/): the
    # loader's hint names it to pass
    return (held, None) if direct or len(held) > 1 else ({}, next(iter(held), None))


def _distinct_ranks(inputs: list[str], heads: TraceHeads) -> bool:
    """Whether every one of ``inputs`` is a trace whose head (``TraceHeads.of``: read already, no tail) records a
    rank id, each another: a node's traces, not a rank's trace beside a stray or a copy."""
    ranks = [_rank_id(heads.of(p).rank) if os.path.isfile(p) else None for p in inputs]
    return None not in ranks and len(set(ranks)) == len(ranks)


def _has_subfolder(path: str) -> bool:
    """Whether ``path`` holds a folder (which may hold a rank's profile); False where it cannot be listed."""
    try:
        with os.scandir(path) as entries:
            return any(e.is_dir() for e in entries)
    except OSError:
        return False


def _refuse_empty_nodes(directory: str, subfolders: list[str], folders: list[str], held: dict[str, list[str]],
                        heads: TraceHeads, alone: bool = False) -> None:
    """``ProfileError`` naming a subfolder named as a node folder but for its digits (``node1/`` beside ``node0/``)
    that holds no rank's profile: a node copied in part, whose ranks the job's compare would leave out without a
    word (every node folder holds ranks). One that cannot be listed or searched is named so, with the hint
    ``_refuse_unlisted_ranks`` gives one (it gave none); one gone since the folder was listed, so
    (``_changed_since_listed``). ``alone``: the folder holds one folder of ranks and no
    rank input of its own, so it may as well be a folder of runs (``run1/`` profiled beside ``run2/`` holding its
    log): the hint names that folder of ranks to pass, where moving the empty one out left a folder around one
    folder of ranks, which the loader refuses in turn (naming the same folder to pass)."""
    masked: dict[str, list[str]] = {}
    for name in sorted(held, key=_name_order):  # digits as numbers: node2 before node10
        masked.setdefault(_DIGITS.sub("#", name), []).append(name)
    lone = next(iter(held)) if alone else None
    for name in folders:
        if name in held or name in subfolders or _DIGITS.sub("#", name) not in masked:
            continue
        path = os.path.join(directory, name)
        beside = masked[_DIGITS.sub("#", name)]
        try:
            refused, bit, error = _search_refused(path, os.listdir(path)), "x", None
        except (FileNotFoundError, NotADirectoryError) as exc:  # gone since listed: no folder to copy ranks into
            raise _changed_since_listed(path, isinstance(exc, NotADirectoryError)) from None
        except OSError as exc:
            refused, bit, error = _unlisted(path, exc)
        if refused:
            why = f"its name is node folder {term_safe(beside[0])}'s but for its digits"
            raise ProfileError(path, refused.message,
                               hint=_unlisted_hint(why, path, directory, lone, bit, error)) from None
        these = f"{short_list(beside, 3)} beside it " + ("holds" if len(beside) == 1 else "hold")
        raise ProfileError(path, f"holds no rank's profile, where {these} "
                                 "ranks (a multi-node job's node folders each hold their ranks)",
                           hint="copy the node's rank folders into it, or " + _away(directory, lone))


def _changed_since_listed(path: str, replaced: bool) -> ProfileError:
    """The error of a node folder removed (or replaced by a file) between the job folder's listing and its check:
    a clean-up or a copy still running, whose ranks the job would lose or read in part."""
    now = "is a file now (replaced" if replaced else "is gone now (removed"
    return ProfileError(path, f"was a folder when the job folder was listed and {now} while it was read)",
                        hint="compare again once nothing is changing the folder")


def _away(directory: str, lone: str | None) -> str:
    """How a folder beside ranks is put aside: moved out of the folder, but where the folder holds one folder of
    ranks (``lone``) and nothing else of its own, moving it out left a folder around that one, which the loader
    refuses in turn ("... such as run1"): that folder is named to pass instead."""
    if lone:
        return f"pass {term_safe(os.path.join(directory, lone))} to compare its ranks alone"
    return "move it out of the folder"


def _unlisted(path: str, exc: OSError) -> tuple[ProfileError, str, OSError | None]:
    """A subfolder's listing that failed with ``exc``: its error, and the permission bit the hint grants ("r")
    where a permission was refused, else the error whose fix the hint gives (``_unlisted_hint``)."""
    refused = ProfileError(path, f"cannot list directory: {exc.strerror or exc}")
    return (refused, "r", None) if isinstance(exc, PermissionError) else (refused, "", exc)


def _unlisted_hint(why: str, path: str, directory: str, lone: str | None, bit: str, error: OSError | None) -> str:
    """The hint of a folder ``path`` that cannot be listed (``bit`` "r") or searched ("x") and is named as one
    holding a rank (``why``): the chmod that grants it, for a folder of the user's own, else who can (the user's
    chmod fails on another's: "Operation not permitted"; "make it readable" named no command). ``error``: a listing
    that failed for another reason than a refused permission (EIO, ELOOP, ...), whose fix it gives instead
    (``os_error_fix``), which no chmod does."""
    if error is not None:
        fix = os_error_fix(error) or f"clear what keeps it from being listed ({error.strerror or error})"
        return f"{why}, so it may hold a rank's profile: {fix}, or {_away(directory, lone)}"
    what = "readable" if bit == "r" else "searchable"
    owner = other_owner(path)
    make = f"{what} (chmod u+{bit})" if owner is None else \
        f"{what} (its owner, {owner}, can: chmod o+{bit}, or g+{bit} for a group you are in)"
    return f"{why}, so it may hold a rank's profile: make it {make}, or {_away(directory, lone)}"


#: Digit runs, masked to tell a subfolder named as a rank's sibling is (node0_gpu1 beside node0_gpu0).
_DIGITS = re.compile(r"[0-9]+")
#: A trace's name but for its suffix (and a cycle's ``.{ms}``): the name a rank's folder beside it would have.
_TRACE_STEM = re.compile(r"(.+?)(?:\.[0-9]+)?(?:\.pt\.trace)?\.json(?:\.gz)?")


def _refuse_unlisted_ranks(directory: str, found: list[str], folders: list[str], traces: list[str],
                           lone: str | None = None, nodes: set[str] | frozenset[str] = frozenset()) -> None:
    """``ProfileError`` naming a subfolder of ``directory`` that cannot be listed or searched (no read or no execute
    permission) and is named as a rank's folder: its name says a rank (``_NAME_RANK``: rank1/), or it is named as
    a subfolder holding a profile (``found``) or a rank's trace in the folder (``traces``: ``worker0.pt.trace
    .json``, ``worker0.{ms}.pt.trace.json``) but for its digits (node0_gpu1/ beside node0_gpu0/, worker1/ beside
    worker0.pt.trace.json). ``_profiling_dirs`` reads such a folder as holding no trace (a folder it can list but
    not search too: none of its files can be opened or told from a folder), and the rank it holds was left out of
    the job without a word (a ``*_ascend_pt`` one is named by ``input_rank``). Any other unreadable folder
    (lost+found at a volume's root, a .Trash-1000) says nothing of a rank and stays none of the job's; one gone
    since the folder was listed, or listing nothing, holds nothing. ``lone``: the folder's one folder of ranks,
    where it holds no rank input of its own (``_node_inputs``): the hint names it to pass, where moving the
    unreadable folder out left a folder around it, which the loader refuses in turn. ``nodes``: those of ``found``
    that are node folders (``_node_inputs``), named so: "rank folder node0's" named a folder of ranks as one rank's."""
    named = {_DIGITS.sub("#", n): f"{'node' if n in nodes else 'rank'} folder {n}'s" for n in reversed(found)}
    for path in traces:
        stem = _TRACE_STEM.fullmatch(os.path.basename(path))
        if stem:
            named.setdefault(_DIGITS.sub("#", stem.group(1)), f"rank trace {os.path.basename(path)}'s")
    for name in folders:
        said = _NAME_RANK.search(name)
        if name in found or not (said or _DIGITS.sub("#", name) in named):
            continue
        path = os.path.join(directory, name)
        try:
            refused, bit, error = _search_refused(path, os.listdir(path)), "x", None
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            refused, bit, error = _unlisted(path, exc)
        if refused:
            why = f"its name says rank {int(said.group(1))}" if said else \
                f"its name is {term_safe(named[_DIGITS.sub('#', name)])} but for its digits"
            raise ProfileError(path, refused.message,
                               hint=_unlisted_hint(why, path, directory, lone, bit, error)) from None


def _search_refused(path: str, names: list[str], hint: bool = False) -> ProfileError | None:
    """The error of a folder that lists ``names`` (read permission) but cannot be searched (no execute
    permission): none of its entries can be opened, nor told file from folder, so discovery read each as absent and
    the folder as holding nothing (a rank left out without a word), or a rank whose compare then refused it, after
    the ranks before it were compared and written. The loader's check (``paths.check_access``: "The path is not
    executable") in discovery's words, as a folder that cannot be listed is said. None where it can be searched, or
    lists nothing (nothing in it to miss). ``hint``: with the loader's hint (``paths.grant_hint``)."""
    if names and not os.access(path, os.X_OK):
        return ProfileError(path, "cannot search directory: Permission denied",
                            hint=grant_hint(path, SEARCH_HINT, "x") if hint else None)
    return None


def _unlistable(path: str, exc: OSError) -> ProfileError:
    """The error of a folder discovery must list and cannot: for want of permission, with the loader's hint
    (``paths.grant_hint``), which the rank folder's and the job folder's lines lacked; for another error, what to do
    about it where its errno says (``paths.os_error_fix``: EIO, ELOOP, ...)."""
    hint = grant_hint(path, READ_HINT, "r") if isinstance(exc, PermissionError) else os_error_fix(exc)
    return ProfileError(path, f"cannot list directory: {exc.strerror or exc}", hint=hint)


def _rank_traces(directory: str, heads: TraceHeads) -> list[str]:
    """The Kineto traces in a folder of ranks: its ``*.pt.trace.json`` files and the JSON objects whose head names
    ``traceEvents`` (rank5.json beside rank4.pt.trace.json). A folder input reads its ``*.pt.trace.json`` alone, else
    its one JSON object: a folder of ranks read so left such a rank out (without a word where both sides held it,
    "only in the comparison" where the base held it under the other name), and took a ``config.json`` beside
    rank0_ascend_pt, rank1_ascend_pt for a rank's trace ("no rank id")."""
    traces, named = folder_traces(directory, heads)
    others = [f for f in _kineto_candidates(directory)
              if f not in traces and heads.of(f).first == "{" and heads.of(f).trace_events]
    if not named:  # the folder's lone JSON object is a trace only where its head says so
        traces = [f for f in traces if heads.of(f).trace_events]
    return sorted(traces + others)


def _holds_profile(path: str, heads: TraceHeads) -> bool:
    """Whether a subfolder ``_profiling_dirs`` found holds a profile: an NPU export's ASCEND_PROFILER_OUTPUT or
    profiler_info*.json, or a Kineto trace; not an empty or half-copied ``rank1_ascend_pt``, nor one gone since the
    folder was listed (it holds nothing now). ``ProfileError`` naming one that is there but cannot be listed (no
    permission), as a rank's input that cannot be is named (``input_rank``): read as no profile, the folder's one
    trace was compared alone, the rank it may hold left out without a word."""
    try:
        names = os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise _unlistable(path, exc) from None
    return (ASCEND_OUTPUT in names or any(_INFO_RE.match(n) for n in names)
            or bool(folder_traces(path, heads)[0]))


def _subfolder_cycles(path: str, heads: TraceHeads) -> list[str] | None:
    """The traces of a Kineto subfolder (no NPU profiling directory) holding two or more named as one worker's
    cycles (``_one_worker``: tensorboard_trace_handler writes a rank's into its folder, ``{worker}.{ms}.pt.trace
    .json``); None for any other folder, whose one trace is the input (more: ``input_rank``'s error)."""
    if path.endswith(("_ascend_pt", "_ascend_ms")) or os.path.isdir(os.path.join(path, ASCEND_OUTPUT)):
        return None
    traces = folder_traces(path, heads)[0]
    return traces if len(traces) > 1 and _one_worker(traces) else None


def discover(directory: str, force: bool = False, heads: TraceHeads | None = None,
             side: str | None = None) -> dict[Unit, str]:
    """{unit: input path} of a folder of ranks: {rank: path} in rank order where every rank is held once; where
    each is held n times (a profiler schedule's cycles: ``repeat`` > 1 or 0 writes one profile per rank and cycle
    into one folder), {RankCycle(rank, k): path} cycle by cycle, ranks in rank order within a cycle, cycle k the
    k-th in recorded order (``_recorded_order``); a folder of single-device profiles (``profiler_info.json``; Kineto
    traces recording no rank), two or more, {RankCycle(None, k): path}. Raises ``ProfileError`` naming the folder
    when it holds no rank input, ranks held different numbers of times (naming them with their counts), a single
    rankless profile, or rankless profiles beside ranks; naming the input without a rank id; without ``force``,
    naming a symbolic link it would follow (``_refuse_links``). Traces' heads are read through ``heads``, the run's
    (a new ``TraceHeads`` where None): the compares' detection reads none again. ``side``: the folder's side in a
    compare ("base side", ...; None for a folder alone), which its warning names."""
    groups = _groups(directory, force, TraceHeads() if heads is None else heads, side)
    counts = {rank: len(paths) for rank, paths in groups.items()}
    if None not in groups and set(counts.values()) == {1}:
        return {rank: paths[0] for rank, paths in groups.items()}
    if len(set(counts.values())) > 1:
        held = ", ".join(f"rank {rank} {n} time{'s' if n > 1 else ''}" for rank, n in counts.items())
        raise ProfileError(directory, f"holds its ranks different numbers of times (a profiler schedule's cycles "
                                      f"per rank): {held}",
                           hint="keep the same cycles of every rank in the folder: which cycle a rank lacks "
                                "cannot be told")
    n = next(iter(counts.values()))
    return {RankCycle(rank, k + 1): paths[k] for k in range(n) for rank, paths in groups.items()}


def _groups(directory: str, force: bool, heads: TraceHeads, side: str | None = None) -> dict[int | None, list[str]]:
    """{rank: its inputs in recorded order} of a folder of ranks, in rank order; {None: ...} for a folder of two or
    more single-device profiles (one rankless group). The errors of ``discover`` but unequal counts."""
    inputs = rank_inputs(directory, heads)
    if not inputs and os.path.isdir(directory):  # a folder that cannot be listed was "one profile, not a folder of
        try:  # ranks" (compare_ranks, ranks), one listed but not searched "holds no profiling directory or trace of
            names = os.listdir(directory)  # a rank": the CLI's loader names why, as here
        except (FileNotFoundError, NotADirectoryError):
            names = []
        except OSError as exc:
            raise _unlistable(directory, exc) from None
        if refused := _search_refused(directory, names, hint=True):
            raise refused
    if not inputs:
        what = "is one profile, not a folder of ranks" if inputs is None and os.path.isdir(directory) \
            else "holds no profiling directory or trace of a rank" if inputs is not None \
            else "no such file or directory" if not os.path.lexists(directory) \
            else "is not a folder"
        raise ProfileError(directory, what, hint="pass a folder holding rank0_ascend_pt, rank1_ascend_pt, ... "
                                                 "or one Kineto trace per rank")
    if not force:
        _refuse_links(inputs, heads)
    alone = [p for p in inputs if _single_device(p)]
    held: dict[int, list[str]] = {}
    rankless: list[str] = []
    for path in sorted(set(inputs) - set(alone)):
        try:
            held.setdefault(input_rank(path, heads, force), []).append(path)
        except _RanklessTrace as exc:
            if not rankless:
                first = exc
            rankless.append(path)
    # no rank recorded: a single device's cycles only where the names are one process's, as the profilers name a
    # schedule's cycles (unrelated runs side by side, told apart by nothing the profiler recorded, are no cycles)
    if alone and (held or rankless or len(alone) == 1 or not _one_worker(alone)):
        raise _single_device_error(directory, alone, held)
    if rankless and not held and (len(rankless) == 1 or not _one_worker(rankless)):  # no folder of ranks
        some = f"{len(rankless)} Kineto traces that record no rank" if len(rankless) > 1 \
            else "1 Kineto trace that records no rank"
        raise NoRanks(directory, f"holds {some} (no distributedInfo.rank in the first or last "
                                      f"{HEAD_BYTES // 1024} KiB), by name: "
                                      f"{_names(_recorded_order(rankless, None), directory)}",
                           hint=f"pass {'one of them' if len(rankless) > 1 else 'it'}, one trace per side; a "
                                "schedule's cycles on one GPU compare cycle by cycle where they are named "
                                "<worker>.<ms>.pt.trace.json, one worker's, as tensorboard_trace_handler names them")
    if rankless and held:
        raise first
    _named_otherwise(directory, held, heads, side)
    if alone or rankless:  # a single device's cycles (a schedule's, in on_trace_ready's folder)
        return {None: _recorded_order(alone or rankless, _collection_ends(inputs))}
    if all(len(paths) == 1 for paths in held.values()):  # one profile per rank: no order to read
        return dict(sorted(held.items()))
    ends = _collection_ends(inputs)  # the folder's order: one for all its groups
    # a rank held several times: its cycles where its names are one worker's (one process), as the profilers name a
    # schedule's cycles; else unrelated runs of that rank side by side, which nothing recorded pairs across folders
    twice = [rank for rank, paths in sorted(held.items()) if len(paths) > 1 and not _one_worker(paths)]
    if twice:
        raise _held_twice(directory, {rank: _recorded_order(held[rank], ends) for rank in twice}, ends is None,
                          inputs)
    return {rank: _recorded_order(paths, ends) for rank, paths in sorted(held.items())}


#: How many ranks held several times ``_held_twice`` names with their inputs; the others by number.
_TWICE_SHOWN = 3


def _held_twice(directory: str, twice: dict[int, list[str]], by_name: bool,
                inputs: list[str] | None = None) -> ProfileError:
    """The error of a folder holding ranks several times as no schedule's cycles (``twice``: {rank: its inputs in
    order}): each of the first ``_TWICE_SHOWN`` ranks with its inputs, the others by number, and where traces lie
    beside their gzip copies, those of every such rank (a folder gzipped in place holds each rank twice: "rank 1
    too" left the user to find rank 1's files and to guess whether the copy was the cause there too). Where the
    copies lie in node folders that hold every one of the folder's ``inputs`` (msinsight's text/: level0/ to
    level2/ and nothing else), moving the others out leaves a folder around one folder of ranks, which the loader
    refuses: the hint bids pass one of them alone; beside other nodes, moving all but one out, which keeps them."""
    ranks = list(twice)
    pieces = []
    for n, rank in enumerate(ranks[:_TWICE_SHOWN]):
        paths = twice[rank]
        times = "twice" if len(paths) == 2 else f"{len(paths)} times"
        order = ("by name" if by_name else "in recorded order") if n == 0 else ""
        pieces.append(f"rank {rank} {times}{f', {order}' if order else ''}: {_names(paths, directory)}")
    rest = ranks[_TWICE_SHOWN:]
    text = "holds " + "; ".join(pieces) + (f"; {named_units(rest)} too" if rest else "")
    hint = ("keep one profile per rank in the folder; a profiler schedule's cycles compare cycle by cycle where "
            "each rank's are one worker's, named as the profilers name them: <worker>_<timestamp>_ascend_pt, "
            "<worker>.<ms>.pt.trace.json")
    spread = _node_clash(twice, directory)
    if spread:
        # "pass one of them on both sides" read as the same folder as both sides: one folder of ranks each
        clash = {_top(p, directory) for paths in twice.values() for p in paths}
        alone = inputs is not None and {_top(p, directory) for p in inputs} <= clash
        # beside other nodes, one of them passed alone left those nodes' ranks out: moving the copies out is the fix
        fix = "pass one of them to each side" if alone else \
            "move all but one of them out of the folder, or pass one of them to each side to compare its ranks alone"
        hint = (f"a multi-node job's node folders hold different ranks, rank ids being numbered across nodes; "
                f"{short_list(spread, 4)} hold the same ranks: {fix}")
    twins = [t for rank in ranks for t in _gz_twins(twice[rank], directory)]
    if twins:
        said = "; ".join(twins[:_TWICE_SHOWN]) + (f"; ... ({len(twins):,} in all)" if len(twins) > _TWICE_SHOWN else "")
        # every rank held twice is one trace and its copy: keeping one of each two is the whole remedy
        copies = len(twins) == len(ranks) and all(len(paths) == 2 for paths in twice.values())
        hint = f"{said}: keep one of {'the two' if len(ranks) == 1 else 'each two'}" if copies else f"{said}; {hint}"
    return ProfileError(directory, text, hint=hint)


def _top(path: str, directory: str) -> str:
    """The name of ``directory``'s entry that ``path`` lies in (or is)."""
    return os.path.relpath(path, directory).split(os.sep)[0]


def _node_clash(twice: dict[int, list[str]], directory: str) -> list[str]:
    """The subfolders of ``directory`` holding the ranks ``_held_twice`` names, where each copy of every such rank
    lies in another subfolder (``level0/rank0_ascend_pt``, ``level1/rank0_ascend_pt``: runs side by side, read as
    the nodes of one job); [] where any copy lies in the folder itself or two in one subfolder (a copy, or cycles:
    the hint on those stays)."""
    spread: set[str] = set()
    for paths in twice.values():
        parts = [os.path.relpath(p, directory).split(os.sep) for p in paths]
        tops = {part[0] for part in parts if len(part) > 1}
        if len(tops) != len(paths):
            return []
        spread |= tops
    return [term_safe(n) for n in sorted(spread, key=_name_order)]


def _named_otherwise(directory: str, held: dict[int, list[str]], heads: TraceHeads, side: str | None = None) -> None:
    """One warning for the Kineto inputs whose name says another rank than the ``distributedInfo.rank`` they record
    (``rank3.pt.trace.json`` recording rank 1, a ``rank3/`` folder's trace too: a swapped or mislabelled copy),
    which went unsaid where an NPU rank's recording two ranks is refused (``_npu_rank``). Each is still taken as
    the rank it records: a Kineto trace's name is the user's (tensorboard_trace_handler's ``worker_name``), which
    may count a node's local ranks, or a LoRA rank, and no name was ever the rank. Said of every such input the
    folder holds, compared or not (a ``--rank_list`` run selects by the recorded rank: "rank 0 by its name, rank 1
    recorded" tells a user who listed 0 for that file why it is not compared), so the line says "taken as", where
    "by which each is compared" was untrue of those left out. A name saying two ranks says none. Every real sample
    naming a rank names the one it records. ``side``: the folder's in a compare, said last as a loader's notes say
    theirs (``errors.side_named``): two job folders of one layout gave lines alike but for a path."""
    odd = []
    for rank, paths in held.items():
        for path in paths:
            named = _named_rank(path, directory, heads)
            if named is not None and named != rank:
                odd.append(f"{os.path.relpath(path, directory)} (rank {named} by its name, rank {rank} recorded)")
    if odd:
        some = ("1 Kineto trace's name says another rank than its distributedInfo.rank, taken as the rank it records"
                if len(odd) == 1 else f"{len(odd):,} Kineto traces' names say another rank than their "
                                      "distributedInfo.rank, each taken as the rank it records")
        log.warning("%s: %s: %s%s", term_safe(directory), some, short_list(sorted(odd, key=_name_order), 10),
                    side_named(side))


def _named_rank(path: str, directory: str, heads: TraceHeads) -> int | None:
    """The rank a Kineto input's path from ``directory`` names (``_NAME_RANK``: its file, or its folder and that
    folder's one trace), where each name saying one says the same; None where none does, they differ, or the
    input is an NPU profiling directory (``_npu_rank`` checks its recorded ranks)."""
    names = os.path.relpath(path, directory).split(os.sep)
    if not os.path.isfile(path):
        try:
            inside = os.listdir(path)
        except OSError:
            return None
        if path.endswith(("_ascend_pt", "_ascend_ms")) or ASCEND_OUTPUT in inside \
                or any(_INFO_RE.match(n) for n in inside):
            return None
        traces = folder_traces(path, heads)[0]
        if len(traces) != 1:
            return None
        names.append(os.path.basename(traces[0]))
    said = {int(m) for name in names for m in _NAME_RANK.findall(name)}
    return said.pop() if len(said) == 1 else None


def _refuse_links(inputs: list[str], heads: TraceHeads) -> None:
    """The loader's refusal of a symbolic link without --force (``paths.check_input``: the original's check, which
    --force lifts), made by discovery for the links it reads through: a rank input, an NPU one's
    ASCEND_PROFILER_OUTPUT and profiler_info / profiler_metadata files, a Kineto subfolder's trace. Discovery
    followed them and a rank's compare refused them, after the ranks before it were compared and written."""
    for path in inputs:
        inside: list[str] = []
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                names = sorted(os.listdir(path))
            except OSError:
                names = []
            inside = [os.path.join(path, n) for n in names
                      if n in (ASCEND_OUTPUT, "profiler_metadata.json") or _INFO_RE.match(n)]
            if not inside:  # a Kineto subfolder: its trace
                inside = folder_traces(path, heads)[0]
        for link in (p for p in (path, *inside) if os.path.islink(p)):
            raise link_refused(link)


def _collection_ends(paths: list[str]) -> dict[str, int] | None:
    """{path: the collection end its profiler_info*.json records} (``_collection_end``: each file read once), None
    where one of ``paths`` records none: then the order of every group is by name (``_recorded_order``)."""
    ends = {p: _collection_end(p) for p in paths}
    return None if None in ends.values() else ends  # type: ignore[return-value]


def _recorded_order(paths: list[str], ends: dict[str, int] | None) -> list[str]:
    """``paths`` in the order the profiler recorded them: by their collection ends (``_collection_ends``), else by
    name, its digits as numbers (a Kineto trace records none in its head; torch_npu's and tensorboard_trace_handler's
    names end with a timestamp: ``w.900`` before ``w.1000``)."""
    if ends is None:
        return sorted(paths, key=_name_order)
    return sorted(paths, key=lambda p: (ends[p], p))


def _name_order(path: str) -> list[tuple[int, int | str]]:
    """A name's sort key, its runs of digits compared as numbers."""
    return [(0, int(part)) if part.isdigit() else (1, part)
            for part in re.split(r"([0-9]+)", os.path.basename(path)) if part]


#: How the profilers name a schedule's cycles: tensorboard_trace_handler ``{worker}.{ms}.pt.trace.json[.gz]``;
#: torch_npu and MindSpore ``{worker}_{YYYYmmddHHMMSSfff}_ascend_pt`` / ``_ascend_ms`` (worker: host_pid by default)
_CYCLE_NAMES = (re.compile(r"(.+)\.[0-9]+\.pt\.trace\.json(?:\.gz)?"), re.compile(r"(.+)_[0-9]{14,}_ascend_(?:pt|ms)"))


def _one_worker(paths: list[str]) -> bool:
    """Whether inputs are one process's cycles: every name as the profilers name them, with one worker, in one
    folder (the one on_trace_ready writes to: a worker's name alone, ``worker0`` of two runs' folders, pairs
    nothing). A trace beside its gzip copy (``w.1.pt.trace.json`` and ``.gz``) is no two cycles: a profiler writes
    one of them."""
    names = set(paths)
    if len({os.path.dirname(p) for p in paths}) > 1 or any(p + ".gz" in names for p in paths):
        return False
    workers = set()
    for path in paths:
        m = _CYCLE_NAMES[0 if os.path.isfile(path) else 1].fullmatch(os.path.basename(path))
        if not m:
            return False
        workers.add(m.group(1))
    return len(workers) == 1


def _single_device(path: str) -> bool:
    """Whether ``path`` is a profiling directory of a single-device run: a ``profiler_info.json`` and no
    ``profiler_info_N.json`` (torch_npu writes the rank into the name for a distributed run only)."""
    try:
        names = os.listdir(path) if os.path.isdir(path) else []
    except OSError:
        return False
    return "profiler_info.json" in names and not any(_INFO_RE.match(n) and _NUMBERED.search(n) for n in names)


def _single_device_error(directory: str, alone: list[str], held: dict[int, list[str]]) -> ProfileError:
    """The error of a folder holding profiles of single-device runs: one per schedule cycle (repeat > 1, or 0) in
    on_trace_ready's folder, or such profiles beside ranks. It names them in recorded order: one is compared per
    side, not a rank of each."""
    ends = _collection_ends(alone)
    order = "by name" if ends is None else "in recorded order"
    paths = _recorded_order(alone, ends)
    some = f"{len(paths)} profiles of single-device runs (no rank ids)" if len(paths) > 1 \
        else "1 profile of a single-device run (no rank id)"
    if not held:
        return NoRanks(directory, f"holds {some}, {order}: {_names(paths, directory)}",
                            hint=f"pass {'one of them' if len(paths) > 1 else 'it'}, one profile per side" + (
                                "; a schedule's cycles compare cycle by cycle where they are named "
                                "<worker>_<timestamp>_ascend_pt, one worker's, as torch_npu names them"
                                if len(paths) > 1 else ""))
    ranked = sorted((rank, path) for rank, many in held.items() for path in many)
    ranks = short_list([f"{os.path.relpath(path, directory)} (rank {rank})" for rank, path in ranked], 10)
    return ProfileError(directory, f"holds {some}, {order}: {_names(paths, directory)}; beside profiles of ranks: "
                                   f"{ranks}",
                        hint="pass one profile per side, or a folder holding one profile per rank of a "
                             "distributed run")


def _gz_twins(paths: list[str], directory: str) -> list[str]:
    """"b.gz looks like b compressed" for each trace file of ``paths`` whose name is another's plus ``.gz`` (a
    trace kept beside its gzip copy, which reads as the same rank twice), so the user knows which to remove; none
    where none is. By name and size (``_inflates_to``): reading both to compare would cost a second parse of each,
    and by name alone a later run gzipped under the old trace's name was called its copy, "keep one of the two"
    bidding the user drop either. Names escaped, as ``_names`` lists them beside it."""
    files = {p for p in paths if os.path.isfile(p)}
    return [f"{term_safe(os.path.relpath(p + '.gz', directory))} looks like {term_safe(os.path.relpath(p, directory))} "
            "compressed" for p in sorted(files) if p + ".gz" in files and _inflates_to(p + ".gz", p)]


def _inflates_to(gz: str, plain: str) -> bool:
    """Whether the gzip file ``gz`` inflates to as many bytes as ``plain`` holds: its trailer's ISIZE
    (``paths.gzip_trailer_size``: the size modulo 2**32, of its last member; ``gzip`` and Python's write one)
    against ``plain``'s size, four bytes read. False where ``gz`` is no gzip file or either cannot be read: no copy
    is claimed."""
    try:
        stated = gzip_trailer_size(gz, os.path.getsize(gz))
        return stated is not None and stated == os.path.getsize(plain) % (1 << 32)
    except OSError:
        return False


def _names(paths: list[str], directory: str) -> str:
    """The inputs' names from ``directory``, which starts the message (a subfolder's cycle: ``rank0/w.1.pt.trace
    .json``), a few of many."""
    return short_list([os.path.relpath(p, directory) for p in paths], 10)


def _collection_end(path: str) -> int | None:
    """``end_info.collectionTimeEnd`` (ns since the epoch) of a profiling directory's profiler_info*.json; None
    where there is none (a Kineto trace, a file or key missing)."""
    try:
        names = sorted(n for n in os.listdir(path) if _INFO_RE.match(n)) if os.path.isdir(path) else []
    except OSError:
        return None
    value = _json_value(os.path.join(path, names[0]), ("end_info", "collectionTimeEnd")) if len(names) == 1 else None
    if isinstance(value, str) and value.isascii() and value.isdigit():  # a number written as text
        value = int(value)
    return value if type(value) is int and value >= 0 else None


class NoRanks(ProfileError):
    """``discover``'s error of a folder whose inputs record no rank at all (single-device profiles, rankless Kineto
    traces) and are no schedule's cycles: one process's runs side by side, no folder of ranks. Against one profile
    such a folder keeps the loader's error ("holds N traces"; ``api._refuse_rank_folders``), where any other error
    of a folder ``rank_inputs`` reads as ranks is discovery's to say."""


class _RanklessTrace(ProfileError):
    """A Kineto trace recording no rank: ``discover`` tells a folder of such traces alone (one GPU's) from a
    folder of ranks with one trace lacking it."""


def input_rank(path: str, heads: TraceHeads | None = None, force: bool = False) -> int:
    """The rank id one input recorded (``discover``); ``ProfileError`` naming it when it holds none. ``force``: a
    gzip trace's tail is inflated past the size cap (``TraceHeads.rank_of``)."""
    heads = TraceHeads() if heads is None else heads
    if os.path.isfile(path):
        return _trace_rank(path, heads, force)
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        raise _unlistable(path, exc) from None
    if refused := _search_refused(path, names, hint=True):  # rank1_ascend_pt read r--: its rank by its name,
        raise refused  # refused by its compare after the ranks before it were compared and written
    if any(_INFO_RE.match(n) for n in names) or path.endswith(("_ascend_pt", "_ascend_ms")) \
            or os.path.isdir(os.path.join(path, ASCEND_OUTPUT)):
        return _npu_rank(path, names)
    traces = folder_traces(path, heads)[0]
    if len(traces) != 1:
        # traces of two workers in one folder: tensorboard_trace_handler's folder after the script ran twice (each
        # run a new pid), given as the log folder above it; the line said what a rank's folder holds, not what to do
        one = f"; or pass one trace per side, such as {term_safe(traces[0])}" if traces else ""
        raise ProfileError(path, f"holds {len(traces)} traces: a rank's folder holds one",
                           hint="or a profiler schedule's cycles, named as tensorboard_trace_handler names them: "
                                f"<worker>.<ms>.pt.trace.json, one worker's{one}")
    return _trace_rank(traces[0], heads, force)


def _trace_rank(path: str, heads: TraceHeads, force: bool = False) -> int:
    """``distributedInfo.rank`` of a Kineto trace, from its first ``HEAD_BYTES``, else its last (decompressed for
    .gz: ``TraceHeads.rank_of``)."""
    head = heads.of(path)
    if head.rank is None and head.first == "" and (unread := _unread_head(path)):
        raise unread
    written = heads.rank_of(path, force)
    if written is None:
        raise _RanklessTrace(path, f"no rank id: no distributedInfo.rank in its first or last {HEAD_BYTES // 1024} "
                                   "KiB",
                             hint="a Kineto trace of a distributed run records it; pass such traces, or compare "
                                  "this one as a single profile")
    rank = _rank_id(written)  # its ASCII digits as text too, as a side file's rank is read
    if rank is None or rank > MAX_RANK:  # true, 1.0, -1: no rank, where read as none they made a rankless trace
        shown = short_repr(written) if type(written) in (int, str) else short_text(json.dumps(written))
        raise ProfileError(path, f"distributedInfo.rank {shown} is no rank id (0 to {MAX_RANK})")
    return rank


def _unread_head(path: str) -> ProfileError | None:
    """The loader's error for a trace whose head read as nothing (``Head.first`` ""), which discovery took for one
    recording no rank ("no distributedInfo.rank in its first or last 64 KiB"): one that cannot be read ("cannot
    read file: Permission denied"), a damaged gzip ("corrupt gzip data: ..."), an empty or blank one ("empty
    file"), as ``traceio.read_bytes`` and ``decode_events`` name them; None for a head of blanks that go on past
    it. Read only on this error's way: its head again, no more."""
    from .traceio import first_char

    try:
        with open(path, "rb") as fh:
            data = fh.read(HEAD_BYTES)
            if data[:2] == b"\x1f\x8b":
                fh.seek(0)
                try:
                    with gzip.GzipFile(fileobj=fh) as gz:
                        data = gz.read(HEAD_BYTES)
                except (OSError, EOFError, zlib.error) as exc:
                    return ProfileError(path, f"corrupt gzip data: {exc}")
    except OSError as exc:
        return ProfileError(path, f"cannot read file: {exc.strerror or exc}")
    return ProfileError(path, "empty file") if len(data) < HEAD_BYTES and not first_char(data) else None


def _npu_rank(path: str, names: list[str]) -> int:
    """N of the profiling directory's ``profiler_info_N.json``, checked against the ``rank_id`` it holds, the
    DB export's name and ``profiler_metadata.json``'s ``distributed_args.rank`` where they give one."""
    numbered = {int(m.group(1)): n for n in names if _INFO_RE.match(n) and (m := _NUMBERED.search(n))}
    if len(numbered) != 1:
        what = (f"holds {len(numbered)} profiler_info_N.json files "
                f"({', '.join(short_text(n) for n in sorted(numbered.values()))})"
                if numbered else "no rank id: it holds no profiler_info_N.json")
        raise ProfileError(path, what, hint="a rank's profiling directory holds one profiler_info_<rank>.json")
    (rank, info), = numbered.items()
    if rank > MAX_RANK:  # compared as such, it named a report rank99999999999999999999 and the overview 1e+20
        # the name and the number cut alike: a ~240-digit name was quoted whole, its number again
        raise ProfileError(path, f"{short_text(info)} names rank {short_repr(rank)}, which is no rank id (0 to "
                                 f"{MAX_RANK})",
                           hint="pass the directory the profiler wrote, unchanged")
    others = [(f"{short_text(info)}'s rank_id", _json_key(os.path.join(path, info), ("rank_id",))),
              ("profiler_metadata.json's distributed_args", _json_key(os.path.join(path, "profiler_metadata.json"),
                                                                      ("distributed_args", "rank")))]
    output = os.path.join(path, ASCEND_OUTPUT)
    try:
        out = os.listdir(output)
    except (FileNotFoundError, NotADirectoryError):  # a profiler_info_N.json alone: its compare names what lacks
        out = []
    except OSError as exc:  # its rank's compare refused it, after the ranks before it were compared and written
        raise _unlistable(output, exc) from None
    if refused := _search_refused(output, out, hint=True):
        raise refused
    for n in sorted(out):
        m = _NUMBERED.search(n)
        if _is_db_name(n) and m:
            others.append((f"the name of {ASCEND_OUTPUT}/{short_text(n)}", int(m.group(1))))
    for where, value in others:
        if value is not None and value != rank:
            raise _two_ranks(path, rank, info, value, where)
    return rank


def check_db_rank(rank: int, profile: Profile, force: bool = False) -> None:
    """The rank a DB export's META_DATA records (``distributed_args.rank``), else its RANK_DEVICE_MAP's one rankId
    (``ascend_db._device_ranks``: torch_npu's DB exports record it there), checked against ``rank``, the one
    discovery read for the rank input ``profile.path`` (``_npu_rank``: its profiler_info_N.json's name), by the
    rule and in the words of a text export's profiler_metadata.json there. Made on the loaded profile, whose
    META_DATA the loader reads: discovery reads names and small JSON files, never a DB, which is opened once, by its
    rank's compare (``api.rank_results``), before its comparators run. Any other profile passes. ``force`` passes a
    RANK_DEVICE_MAP rank that differs: CANN writes that table, not torch_npu's distributed rank, and no real export
    shows it numbered otherwise (a multi-node job's could be), so a user who knows the folders are right can go on."""
    if profile.source != "ascend_db":
        return
    path = profile.path
    args = profile.metadata.get("distributed_args")
    value = _rank_id(args.get("rank") if isinstance(args, dict) else None)
    table = "META_DATA distributed_args"
    devices = profile.extra.get("device_ranks") or ()
    if value is None and len(devices) != 1 and (len(devices) > 1 or profile.extra.get("device_ranks_odd", (0,))[0]):
        # the map names no one rank (two, or none but cells that are no rank id): the check has nothing to go by
        profile.warnings.append(sided(_unchecked_rank(profile, rank, devices)))  # loaded already: its side here
    if value is None and not devices and profile.extra.get("device_map_none"):
        # nothing the DB holds names its rank (exports that never write the map are usual: no warning); the line
        # names no rank, so the ranks of one job that all lack it say it once
        log.info(
            "%s: its DB export records no rank (%s, and META_DATA no distributed_args rank), so its rank is the one "
            "its profiler_info_N.json's name gives, checked against nothing the DB holds", path,
            profile.extra["device_map_none"])
    if (value is None or value == rank) and len(devices) == 1 and devices[0] != rank:
        if force:  # passed as asked (the refusal's hint), but said: --force lifts other checks too
            log.info(
                "%s: RANK_DEVICE_MAP names rank %d; compared as rank %d, as its folder's profiler_info_N.json names "
                "it (--force)", profile.files.get("db", path), devices[0], rank)
            return
        # the rank the DB names where META_DATA names none (torch_npu's DB exports): a copy of rank 1 renamed
        # rank 0 (profiler_info_0.json, ascend_pytorch_profiler_0.db) was compared as rank 0 without a word
        value, table = devices[0], "RANK_DEVICE_MAP rankId"
    if value is None or value == rank:
        return
    try:
        names = os.listdir(given_path(path))
    except OSError:
        names = []
    infos = [n for n in sorted(names) if _INFO_RE.match(n) and _NUMBERED.search(n)]
    info = infos[0] if len(infos) == 1 else f"profiler_info_{rank}.json"  # discovery saw one: changed since
    db = os.path.relpath(profile.files.get("db", path), given_path(path))
    # the file's name cut as the info file's is (a name of ~240 characters was quoted whole), its folder kept
    folder, name = os.path.split(db)
    db = os.path.join(folder, short_text(name)) if folder else short_text(name)
    hint = None if table.startswith("META") else (f"pass the directory the profiler wrote, unchanged, or add --force "
                                                  f"to compare it as rank {rank}, as {short_text(info)} names it")
    raise _two_ranks(path, rank, info, value, f"{db}'s {table}", hint)


def _unchecked_rank(profile: Profile, rank: int, devices: tuple[int, ...]) -> str:
    """The warning of a DB export whose rank ``check_db_rank`` cannot check: no META_DATA rank, and a RANK_DEVICE_MAP
    naming several ranks (a row written again with another rankId) or none but cells that are no rank id (NULL,
    negative, text), where a copy of another rank's export renamed to ``rank`` passed without a word."""
    odd, first = profile.extra.get("device_ranks_odd", (0, ""))
    named = f"ranks {', '.join(str(r) for r in devices)}" if devices else "no rank id"
    bad = f"; {odd:,} rankId value(s) are no rank id (an integer from 0 to {MAX_RANK}; the first: {first})" if odd \
        else ""
    return (f"{profile.files.get('db', profile.path)}: RANK_DEVICE_MAP names {named}{bad}, and META_DATA no "
            f"distributed_args rank, so its rank is not checked against rank {rank}, which its folder's "
            "profiler_info_N.json names")


def _two_ranks(path: str, rank: int, info: str, value: int, where: str, hint: str | None = None) -> ProfileError:
    """The error of a profiling directory recording two rank ids: ``rank`` by its ``info`` file's name, ``value``
    by ``where``."""
    return ProfileError(path, f"records two rank ids: rank {rank} by the name of {short_text(info)}, rank "
                              f"{short_repr(value)} by {term_safe(where)}",
                        hint=hint or "pass the directory the profiler wrote, unchanged")


def _json_key(path: str, keys: tuple[str, ...]) -> int | None:
    """The integer at ``keys`` of a small JSON side file; None where the file, the key or a number is missing."""
    return _rank_id(_json_value(path, keys))


def _rank_id(value: object) -> int | None:
    """``value`` where it is a rank id the profiler could have written (an integer from 0, a bool none, or its ASCII
    digits as text, as ``world_size`` is read: a rank "0" in a rank 1 folder's META_DATA passed unchecked), else
    None: a side file's or META_DATA's rank that is none is not compared with the name's."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value.lstrip("0")) <= 19:
        value = int(value.lstrip("0") or "0")  # str.isdigit() alone takes "²"; the length bounds int()'s work
    return value if type(value) is int and value >= 0 else None


def _json_value(path: str, keys: tuple[str, ...]) -> object:
    """The value at ``keys`` of a small JSON side file; None where the file or a key is missing."""
    try:
        if os.path.getsize(path) > _SIDE_FILE_BYTES:
            return None
        with open(path, "rb") as fh:
            value = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value
