"""Logging setup shared by every face (CLI, script).

One logger, ``msprof-analyze``, writing ``[%Y-%m-%d %H:%M:%S][LEVEL] message``
lines to stderr, as the original does (reference-1 §1.7), so scripts that grep
its log keep working. The level comes from ``MSPROF_ANALYZE_LOG_LEVEL``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from .textsafe import term_safe
from .units import Unit, unit_label, unit_noun

LOGGER_NAME = "msprof-analyze"
LEVEL_ENV = "MSPROF_ANALYZE_LOG_LEVEL"
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_FORMAT = "[%(asctime)s][%(levelname)s] %(message)s"
_DATEFMT = "%Y-%m-%d %H:%M:%S"


class _SafeFormatter(logging.Formatter):
    """Log lines stay single lines that cannot drive the terminal: names and paths from a profile or an
    argument (ESC, CR, newline, bidi overrides) are shown escaped. A ``--debug`` traceback is appended
    after this and keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return term_safe(super().formatMessage(record))


class _StderrHandler(logging.StreamHandler):
    """A handler that looks up ``sys.stderr`` at emit time (pytest and callers may swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> TextIO:  # noqa: D401 - property mirrors StreamHandler.stream
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        """A log line that cannot be written (stderr full or closed) has nowhere to be reported: drop it
        instead of printing logging's "--- Logging error ---" traceback to that same stderr. Other errors
        (a message that does not format) are reported as logging does."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handleError(record)


#: Serializes the compares' filter changes on the shared logger (``_add_filter``).
_FILTERS_LOCK = threading.Lock()


def _add_filter(logger: logging.Logger, flt: logging.Filter) -> None:
    """``logger.addFilter`` that replaces the list instead of changing it: logging walks ``logger.filters`` while a
    record is logged, and a compare in another thread that removed its filter from that list meanwhile shifted the
    rest, so that the walk skipped the filter after it (this compare's paths then named absolute, a notice said
    twice). A walk keeps the list it began with."""
    with _FILTERS_LOCK:
        logger.filters = [*logger.filters, flt]


def _remove_filter(logger: logging.Logger, flt: logging.Filter) -> None:
    """``logger.removeFilter`` that replaces the list (see ``_add_filter``)."""
    with _FILTERS_LOCK:
        logger.filters = [f for f in logger.filters if f is not flt]


_Filter = TypeVar("_Filter", bound=logging.Filter)


@contextmanager
def _installed(flt: _Filter) -> Iterator[_Filter]:
    """``flt`` on the shared logger for the length of the block (``_add_filter``), then off."""
    logger = logging.getLogger(LOGGER_NAME)
    _add_filter(logger, flt)
    try:
        yield flt
    finally:
        _remove_filter(logger, flt)


class _SaidOnce(logging.Filter):
    """Drops an info line, warning or error whose text was already logged in this run: a self-compare (or two
    inputs that lack the same file) would otherwise print each notice of a side twice, word for word. Info lines
    count too: a run without ``--enable_*`` flags logs a side's "Can't find any memory event / communication op"
    notices at INFO (``Options.notice_level``), and a self-compare printed each of them twice. The filter sits on
    the shared logger, so it judges only the records of the thread that runs its compare: two compares in
    threads (a pool over ranks) each log their own notices, also those of the same words."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[int, str]] = set()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.INFO or (record.thread is not None and record.thread != self.thread):
            return True
        key = (record.levelno, record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


@contextmanager
def said_once() -> Iterator[None]:
    """For the length of one compare, each warning text is logged once (see ``_SaidOnce``)."""
    with _installed(_SaidOnce()):
        yield


#: The attribute of a record (``api_worded``) holding (the CLI's text, the text as ``compare()``'s caller reads it)
#: where they differ beyond the flags' names, as ``errors.ProfileError.api_text``: the CLI's quotes a name for a
#: shell, compare()'s as Python.
API_TEXT = "api_text"


def api_worded(cli: str, api: str) -> dict[str, dict[str, tuple[str, str]]]:
    """The keyword arguments of a log call whose line ``cli`` reads ``api`` for ``compare()``'s caller
    (``log.warning("%s", cli, **api_worded(cli, api))``): ``_Retyped`` swaps the one for the other inside the
    line, after a rank-by-rank compare put the rank in front (``RankNotices``)."""
    return {"extra": {API_TEXT: (cli, api)}}


class _Retyped(logging.Filter):
    """Rewrites the paths a record names with ``retype`` (``loaders.paths.TypedPaths.text``: an input's files
    named as the user typed the input), for the records of the thread that runs its compare (see ``_SaidOnce``) at
    ``level`` or above; ``api``: a record's ``API_TEXT`` replaces its text first."""

    def __init__(self, retype: Callable[[str], str], level: int = logging.NOTSET, api: bool = False) -> None:
        super().__init__()
        self.retype = retype
        self.level = level
        self.api = api
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.level and (record.thread is None or record.thread == self.thread):
            text = record.getMessage()
            said = getattr(record, API_TEXT, None) if self.api else None
            new = self.retype(text if said is None else text.replace(*said))
            if new != text:
                record.msg, record.args = new, ()
        return True


class RankNotices(logging.Filter):
    """Drops an info line, warning or error that repeats one an earlier rank of a rank-by-rank compare logged, but
    for the rank inputs' paths it names: eight ranks of one job would otherwise print the same notices eight times
    (a Level0 side's missing files, the profiler settings that differ). A path is compared by its side, so a
    notice about the comparison's rank 1 is no repeat of the same notice about the base's rank 0. A block (a line
    and the indented "  - " lines under it) whose line repeats an earlier rank's but some items do not (its own
    figures: a text against a DB export's E2E on each rank) is said in one line, its title "as for rank M but:" its
    first new item, the explanation that item shares with an item said before left out, and any later new item
    under it: eight ranks printed the six-line block eight times. Counted in ``repeated``; this thread's records
    only (see ``_SaidOnce``). A line said begins with its rank, ``rank N: ``, so that a notice of one rank alone says
    whose it is; a block's item too, before its indent. Installed only around a rank's own work (``of_rank``): the
    job's lines, which name their ranks, are logged outside it."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__()
        side: dict[str, str] = {}
        for pair in pairs:
            for marker, given in zip(("\0base", "\0comparison"), pair, strict=True):
                for form in (given, os.path.abspath(given), os.path.realpath(given)):
                    side[form] = marker if side.get(form, marker) == marker else "\0"  # one input on both sides
        # rank10_ascend_pt before its prefix rank1_ascend_pt
        self.inputs = sorted(side.items(), key=lambda item: len(item[0]), reverse=True)
        self.seen: dict[tuple[int, str], Unit] = {}  # each notice's first rank (or rank cycle: units.RankCycle)
        self.rank: Unit = 0
        self.left_out: dict[int, int] = {}  # records left out, by level
        self.thread = threading.get_ident()
        self.held: tuple[str, Unit, int] | None = None  # a left-out block line's title, first rank, level; or None
        self.condensed = False  # the block under way was said in one line: its repeated items are left out
        self.leads: set[tuple[int, str]] = set()  # the items said: each one's text up to its last ": "

    def start(self, rank: Unit) -> None:
        """The rank whose compare logs next, in this thread: a notice its own compare repeats (both sides alike) is
        no earlier rank's, and is left to ``_SaidOnce``."""
        self.rank = rank
        self.held, self.condensed = None, False
        self.thread = threading.get_ident()

    @contextmanager
    def of_rank(self, rank: Unit) -> Iterator[None]:
        """On the shared logger for one piece of ``rank``'s work (its compare; the CLI's writing of its reports),
        then off: the lines a caller logs between ranks (its loop body) keep their words, and two rank-by-rank
        compares, interleaved or in threads, each judge their own records with their own state."""
        self.start(rank)
        with _installed(self):
            yield

    def say_left_out(self, api: bool = False) -> None:
        """Log the line counting the records left out (none when none was), at ``level``; ``api``: for
        ``compare_ranks``, whose option is a keyword."""
        line = left_out_line(self.repeated, unit_noun(self.rank), api)  # the units' kind: the last one's
        if line:
            logging.getLogger(LOGGER_NAME).log(self.level, line)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.INFO or (record.thread is not None and record.thread != self.thread):
            return True
        text = record.getMessage()
        item = text.startswith("  ")
        for path, marker in self.inputs:
            text = text.replace(path, marker)
        key = (record.levelno, text)
        new = self.seen.setdefault(key, self.rank) == self.rank
        if item:
            lead = (record.levelno, text.rpartition(": ")[0])
            said_lead = lead in self.leads
            self.leads.add(lead)
            if new and self.held is not None:  # the block's first new item: said in one line with its title
                title, first, level = self.held
                part = record.getMessage().strip()[2:]
                if said_lead and ": " in lead[1].strip():  # its explanation said before: its figures alone
                    part = f"{part.split(': ', 1)[0]}: {part.rpartition(': ')[2]}"
                line = f"{unit_label(self.rank)}: {title}, as for {unit_label(first)} but: {part}"
                record.msg, record.args = line, ()
                self.held, self.condensed = None, True
                self.left_out[level] -= 1  # the block's line, held, is said in it
                return True
            if not new and (self.held is not None or self.condensed):
                self._count(record, 1)
                return False
            return self._named(record)  # an item of a block said, or a new item under a block said in one line
        self.condensed = False
        if new:
            self.held = None
            return self._named(record)
        self.held = (re.split(r" \(|:", record.getMessage(), maxsplit=1)[0], self.seen[key], record.levelno)
        self._count(record, 1)
        return False

    def _named(self, record: logging.LogRecord) -> bool:
        """Let ``record`` through, beginning with its rank; a block's item too, its indent after the rank
        (``rank 1:   - base ...``): an item without it read as no rank's, a grep for the rank lost it, and two
        ranks' blocks logged by threads at once could not be told apart."""
        prefix = f"{unit_label(self.rank)}: "
        text = record.getMessage()
        if not text.startswith(prefix):
            record.msg, record.args = prefix + text, ()
        return True

    def _count(self, record: logging.LogRecord, n: int) -> None:
        self.left_out[record.levelno] = self.left_out.get(record.levelno, 0) + n

    @property
    def repeated(self) -> int:
        """How many records were left out."""
        return sum(self.left_out.values())

    @property
    def level(self) -> int:
        """The highest level of a record left out (INFO when none was): the line that counts them is logged at it,
        so that a run logging warnings only still learns that later ranks' warnings were left out."""
        return max((level for level, n in self.left_out.items() if n), default=logging.INFO)


def left_out_line(repeated: int, noun: str = "rank", api: bool = False) -> str:
    """The line counting the notices of later ranks the rank-by-rank dedupe left out ("" when none was), and how
    to see them, which it left the user to guess: nothing keeps a line it drops (a rank's Summary sheet holds its
    checks' notes, not its loaders'), and the unit compared first drops none, so a rank compared alone
    (``--rank_list N``; ``rank_list=N`` for ``compare_ranks``: ``api``) shows all its own. A cycle's are dropped
    against its rank's earlier cycles too, which ``--rank_list`` keeps: its two inputs compared alone show them.
    ``noun`` names the units (``units.unit_noun``: "rank cycle", "cycle" for a schedule's cycles)."""
    if not repeated:
        return ""
    if noun == "rank":
        how = f"{'rank_list=N' if api else '--rank_list N'} compares rank N alone, with all its notices"
    else:
        how = f"a {noun}'s two inputs compared alone show all its notices"
    # "that repeated an earlier rank's but for the rank's own paths" named the unit three times ("rank cycle's")
    if repeated == 1:
        return f"Left out 1 notice of a later {noun}, the same as an earlier {noun}'s but for its paths; {how}."
    return (f"Left out {repeated} notices of later {noun}s, each the same as an earlier {noun}'s but for its paths; "
            f"{how}.")


@contextmanager
def paths_as_typed(retype: Callable[[str], str], level: int = logging.NOTSET, api: bool = False) -> Iterator[None]:
    """For the length of one compare, log lines (at ``level`` or above) name the inputs' files as typed (see
    ``_Retyped``), worded for ``compare()`` where ``api``."""
    with _installed(_Retyped(retype, level, api)):
        yield


def level_from_env() -> int:
    """The log level named by ``MSPROF_ANALYZE_LOG_LEVEL`` (INFO when unset or unknown)."""
    name = os.environ.get(LEVEL_ENV, "INFO").strip().upper()
    return getattr(logging, name) if name in _LEVELS else logging.INFO


def setup_logging() -> logging.Logger:
    """Configure the ``msprof-analyze`` logger once (idempotent) and return it."""
    logger = logging.getLogger(LOGGER_NAME)
    first = not any(isinstance(h, _StderrHandler) for h in logger.handlers)
    if first:
        handler = _StderrHandler()
        handler.setFormatter(_SafeFormatter(_FORMAT, _DATEFMT))
        logger.addHandler(handler)
    logger.setLevel(level_from_env())
    logger.propagate = False
    if first and os.environ.get(LEVEL_ENV) and os.environ[LEVEL_ENV].strip().upper() not in _LEVELS:
        # said once: every face calls this again before its run
        logger.warning("Ignoring %s=%r: expected one of %s.", LEVEL_ENV, os.environ[LEVEL_ENV], ", ".join(_LEVELS))
    return logger


@contextmanager
def run_logging() -> Iterator[logging.Logger]:
    """``setup_logging`` for the length of one command-line run, then the logger as it was: a program that runs
    the CLI in its own process (``cli.script_main([...])``, or ``cli.analyze_main([...])`` with its SystemExit
    caught) and then calls ``compare()`` gets the API's notices through
    its own logging configuration again (propagated, no stderr handler of ours), as the README promises."""
    logger = logging.getLogger(LOGGER_NAME)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        yield setup_logging()
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])
        logger.propagate = saved[2]
