"""What the first bytes of each JSON file tell before it is loaded, read once per file per run (``TraceHeads``).

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
#: objects, after it): read where the object runs past ``PROBE_BYTES``.
_TOP_RANK = re.compile(rb'\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"rank"\s*:\s*(-?[0-9]+)\s*[,}]')


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


class TraceHeads:
    """The ``Head`` of each file asked for, read on the first ask (``of``) and kept for the rest of the run, by
    absolute path (discovery names a rank's trace as the folder was typed, detection as the loader resolves it).
    A ``Head`` is three small fields: a run over thousands of traces keeps kilobytes, not their heads."""

    def __init__(self) -> None:
        self._heads: dict[str, Head] = {}

    def of(self, path: str) -> Head:
        """The ``Head`` of ``path``, its first ``PROBE_BYTES`` read on the first ask alone."""
        key = os.path.abspath(path)
        head = self._heads.get(key)
        if head is None:
            from .traceio import first_char, head_bytes  # numpy and msgspec: not for a --help or a usage error

            data = head_bytes(path, PROBE_BYTES)
            head = self._heads[key] = Head(first_char(data[:_FIRST_BYTES]), b'"traceEvents"' in data,
                                           distributed_rank(data))
        return head


def distributed_rank(head: bytes) -> object:
    """``distributedInfo.rank`` of a Kineto trace's head, as written: the whole object decoded (it nests process
    groups, ``pg_config``, in torch >= 2.1), or its own ``rank`` key where the head cuts the object; None where
    there is none (or null). A value that is no rank id is returned too, for discovery to refuse naming it
    (``ranks._trace_rank``): read as none, a rank written "1" or 1.0 was told "no distributedInfo.rank", and two
    such ranks of one host were compared as one device's profiler cycles without a word (kfuzz64)."""
    m = _DISTRIBUTED.search(head)
    rank = None
    if m:
        try:
            info, _ = json.JSONDecoder().raw_decode(head[m.end():].decode("utf-8", "replace"))
            rank = info.get("rank") if isinstance(info, dict) else None
        except ValueError:  # cut by the head, or an integer of more digits than int() reads (4,300)
            top = _TOP_RANK.match(head, m.end())
            rank = _rank_digits(top.group(1)) if top else None
    return rank


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
