"""What the first bytes of each JSON file tell before it is loaded, read once per file per run (``TraceHeads``), and
for rank discovery a Kineto trace's last bytes where its head records no rank (``TraceHeads.rank_of``).

Detection and rank discovery look at a trace's head several times in one run: whether a folder's JSON file is an
object (a Kineto trace) and names ``traceEvents``, its ``distributedInfo.rank``, whether a side is Kineto before
loading. A rank-by-rank run asked each again: the CLI's test for two folders of ranks, each side's discovery (its
link check and subfolders too), and each rank's detection read a trace's head up to 11 times. One ``TraceHeads``
is made per run (``cli``, ``api.compare_ranks``, a single compare) and passed along: no global cache, so a file
rewritten between two runs is read afresh, and nothing outlives the run.
"""

from __future__ import annotations

import json
import os
import re
from typing import NamedTuple

#: How much of a JSON file the probes read: a Kineto trace's header before its events (device properties,
#: ``distributedInfo`` with its process groups) is a few KiB.
PROBE_BYTES = 64 * 1024
#: The head ``first_char`` looks at (``Head.first``): as ``traceio.head_bytes``' default read.
_FIRST_BYTES = 4096
_DISTRIBUTED = re.compile(rb'"distributedInfo"\s*:\s*(?=\{)')
#: ``distributedInfo``'s own ``rank`` key, before any nested value (torch >= 2.1 writes ``pg_config``, a list of
#: objects, after it): read where the object runs past ``PROBE_BYTES``. Its value as written, any JSON scalar:
#: an integer, its digits as text ("1", a rank as ``_rank_id`` reads it), or what is no rank (1.0, true), which
#: discovery refuses naming it; read as none, "1" was told "no distributedInfo.rank" where the object ran past
#: the head, and read where it did not.
_TOP_RANK = re.compile(rb'\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"rank"\s*:\s*'
                       rb'("(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)'
                       rb'\s*[,}]')


class Head(NamedTuple):
    """What a file's first ``PROBE_BYTES`` (decompressed for gzip) tell; read as empty where they cannot be read
    (the loader names the problem)."""

    #: ``traceio.first_char`` of the first 4 KiB: "{" a JSON object, "[" an event list, "" blank or unreadable
    first: str
    #: whether the head names the key ``"traceEvents"``, as a Kineto trace's does
    trace_events: bool
    #: ``distributedInfo.rank`` as the head writes it (any JSON value; ``ranks`` tells a rank id), None where it
    #: records none (or null)
    rank: object
    #: whether the head is the whole file (shorter than ``PROBE_BYTES``): its tail holds nothing more
    whole: bool


class TraceHeads:
    """The ``Head`` of each file asked for, read on the first ask (``of``) and kept for the rest of the run, by
    absolute path (discovery names a rank's trace as the folder was typed, detection as the loader resolves it).
    A ``Head`` is four small fields, a tail's rank one more: a run over thousands of traces keeps kilobytes, not
    their heads."""

    def __init__(self) -> None:
        self._heads: dict[str, Head] = {}
        self._late: dict[str, object] = {}

    def of(self, path: str) -> Head:
        """The ``Head`` of ``path``, its first ``PROBE_BYTES`` read on the first ask alone."""
        key = os.path.abspath(path)
        head = self._heads.get(key)
        if head is None:
            from .traceio import first_char, head_bytes  # numpy and msgspec: not for a --help or a usage error

            data = head_bytes(path, PROBE_BYTES)
            head = self._heads[key] = Head(first_char(data[:_FIRST_BYTES]), b'"traceEvents"' in data,
                                           distributed_rank(data), len(data) < PROBE_BYTES)
        return head

    def rank_of(self, path: str, force: bool = False) -> object:
        """``distributedInfo.rank`` as ``path`` writes it: its head's (``Head.rank``), else its last
        ``PROBE_BYTES``' (None where the head is the whole file): the Kineto of hta's 2022-23 samples wrote
        ``distributedInfo`` after ``traceEvents`` (cupti_profiler, execution_trace), so a rank's trace longer than
        the head read as recording none. Read once per run, on discovery's ask alone (a single compare reads no
        rank); ``traceio.tail_bytes``' errors (a damaged gzip, past the size cap without ``force``). A gzip trace is
        so inflated twice in a rank-by-rank run, here to its end and then by its load: the load cannot give the rank
        instead, as every rank is needed to pair the two sides before the first compare, and keeping each such
        trace's inflated bytes (or profile) until its load would hold all of them at once. The pass costs zlib's
        inflate of the whole stream, about an eighth of the trace's load, and a few blocks of memory (62 MB inflated
        from 4.5 MB: 0.06 s against 0.5 s CPU, session 67). A rank written in neither the first nor the last
        ``PROBE_BYTES`` reads as none for the same reason: only a whole pass, the load's, would find it."""
        key = os.path.abspath(path)
        if key not in self._late:
            head = self.of(path)
            if head.rank is not None or head.whole:
                self._late[key] = head.rank
            else:
                from .traceio import tail_bytes

                self._late[key] = distributed_rank(tail_bytes(path, PROBE_BYTES, force), last=True)
        return self._late[key]


def distributed_rank(head: bytes, last: bool = False) -> object:
    """``distributedInfo.rank`` of a Kineto trace's head, as written: the whole object decoded (it nests process
    groups, ``pg_config``, in torch >= 2.1), or its own ``rank`` key where the head cuts the object; None where
    there is none (or null). A value that is no rank id is returned too, for discovery to refuse naming it
    (``ranks._trace_rank``): read as none, a rank written "1" or 1.0 was told "no distributedInfo.rank", and two
    such ranks of one host were compared as one device's profiler cycles without a word (kfuzz64). ``last``: the
    last ``distributedInfo`` of ``head`` (a trace's tail, ``TraceHeads.rank_of``: the key written after every
    event), not the first."""
    found = list(_DISTRIBUTED.finditer(head)) if last else [m for m in [_DISTRIBUTED.search(head)] if m]
    rank = None
    if found:
        at = found[-1].end()
        try:
            info, _ = json.JSONDecoder().raw_decode(head[at:].decode("utf-8", "replace"))
            rank = info.get("rank") if isinstance(info, dict) else None
        except ValueError:  # cut by the head, or an integer of more digits than int() reads (4,300)
            top = _TOP_RANK.match(head, at)
            rank = _scalar(top.group(1)) if top else None
    return rank


def _scalar(text: bytes) -> object:
    """The JSON scalar ``text`` (``_TOP_RANK``'s value) writes: an integer through ``_rank_digits`` (any length),
    else as ``json`` reads it (text, a fraction, true, null)."""
    if text.lstrip(b"-").isdigit():
        return _rank_digits(text)
    try:
        return json.loads(text)
    except ValueError:  # text of a bad escape: no rank
        return None


#: The rank read from a ``rank`` of more digits than int() converts (4,300): a rank past every rank id, which
#: discovery refuses (``ranks._trace_rank``), and which no message can quote (``textsafe.short_repr``).
PAST_EVERY_RANK = 10**4300


def _rank_digits(text: bytes) -> int | None:
    """The integer ``text`` (``_TOP_RANK``'s digits) writes; ``PAST_EVERY_RANK`` where it has more digits than
    int() converts (int() raised ValueError: an internal error at discovery), None for such a negative one."""
    negative = text.startswith(b"-")
    digits = text.lstrip(b"-").lstrip(b"0") or b"0"  # leading zeros count toward int()'s limit too
    if len(digits) <= 4300:
        return -int(digits) if negative else int(digits)
    return None if negative else PAST_EVERY_RANK
