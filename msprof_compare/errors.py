"""The failures a run can end with: bad usage (``UsageError``, ``StepError``: exit 2), bad data
(``ProfileError``: exit 1) and memory that ran out on a known file (``OutOfMemory``: exit 1).

Loaders and comparators raise these for what they detect, so the faces (CLI, script, API) can map
them to exit codes and one-line messages.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from .units import Unit, unit_label


def side_named(side: str | None, aside: str | None = None) -> str:
    """" (SIDE: ASIDE)", " (SIDE)", " (ASIDE)" or "": the one way a line about one input names its side
    ("base side", "comparison side", "both sides"; ``RunContext.side``), last and first in the parenthesis that
    says why, so that a command ending the aside stays whole. Two ranks of one job gave lines that differed by a
    digit of a path; each message wrote this parenthesis by hand, and a new one could put the side elsewhere."""
    said = ": ".join(t for t in (side, aside) if t)
    return f" ({said})" if said else ""


class UsageError(Exception):
    """Bad command-line usage or option values (exit code 2)."""

    exit_code = 2


class ProfileError(Exception):
    """Unreadable or inconsistent profile data (exit code 1).

    Carries the offending file so the message always names it.
    """

    exit_code = 1

    def __init__(self, path: str | os.PathLike | None, message: str, hint: str | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.message = message
        self.hint = hint
        super().__init__(self.__str__())

    #: The rank (or rank cycle: ``units.RankCycle``) whose input failed, in a rank-by-rank compare
    #: (``api.compare_ranks``): named first.
    rank: Unit | None = None
    #: The side whose input failed ("base side", "comparison side", or "both sides" where one input is on both;
    #: ``on_side``), named where a warning names it: two inputs of one name (rank 0 against rank 1 of a job) gave
    #: lines that differed by a digit of a path.
    side: str | None = None
    #: (message, hint) as ``compare()``'s caller reads them where they differ from the CLI's beyond the flags'
    #: names (``api._compare`` puts them in place): the CLI's quote an op name for a shell, the API's as Python.
    api_text: tuple[str, str | None] | None = None

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        text = f"{unit_label(self.rank)}: {text}" if self.rank is not None else text
        return text + self.closing(self.hint)

    def closing(self, hint: str | None) -> str:
        """The line's end after the message: " (SIDE: HINT)", " (SIDE)", " (HINT)" or "", the side before the
        hint as a warning's aside (``side_named``), so a command ending the hint stays whole."""
        return side_named(self.side, hint)

    def __reduce__(self) -> tuple[type, tuple[str | None, str, str | None], dict[str, object]]:
        """Picklable (a worker process or a Dask/Ray task can send it back as it is): every attribute it carries,
        what a rank-by-rank compare adds too (``api._rank_error``: ``rank``, ``rank_inputs``, the message naming
        the unit), as ``OutOfMemory``."""
        return (type(self), (self.path, self.message, self.hint), {**self.__dict__, "args": self.args})


class ConfigError(ProfileError):
    """A configuration file of the run's own (the keyword lists: ``classify.load_keywords``) that cannot be used: an
    error of the job, not of a rank's inputs, so a rank-by-rank compare names no rank before it
    (``api._rank_error``)."""


class StepError(UsageError):
    """A requested --base_step/--comparison_step does not exist in the data (exit code 2)."""

    #: The side whose step was refused (``on_side``), named last: two ranks of one job without step 7 gave lines
    #: that differed by a digit of a path, and the line did not say which of the two step options it was about.
    side: str | None = None

    def __init__(self, message: str, aside: str | None = None) -> None:
        """``aside``: what the line's closing parenthesis says after the side (``side_named``), such as the steps
        the file does hold: written into the message, it read "(it holds step 49) (both sides)"."""
        self.message = message
        self.aside = aside
        super().__init__(self.said())

    def said(self) -> str:
        """The line: the message, then " (SIDE: ASIDE)", " (SIDE)", " (ASIDE)" or ""."""
        return self.message + side_named(self.side, self.aside)


class OutOfMemory(MemoryError):
    """Memory ran out while a known file was loaded or written: the CLI's out-of-memory line names it.

    ``doing`` completes "out of memory while ...": "loading it" or "writing the workbook"."""

    #: The side whose input was being loaded (``ProfileError.side``).
    side: str | None = None

    def __init__(self, path: str | os.PathLike, doing: str) -> None:
        self.path = os.fspath(path)
        self.doing = doing
        super().__init__(self.said())

    def said(self) -> str:
        """The line without the CLI's advice: "PATH: out of memory while DOING", then its side."""
        return f"{self.path}: out of memory while {self.doing}{side_named(self.side)}"

    def __reduce__(self) -> tuple[type, tuple[str, str], dict[str, object]]:
        """Picklable with what a rank-by-rank compare adds (``api._rank_error``: ``rank``, ``rank_inputs`` and the
        message naming the unit): a worker process sends it back as it is, as a ``ProfileError``."""
        return (type(self), (self.path, self.doing), {**self.__dict__, "args": self.args})


@contextlib.contextmanager
def on_side(side: str) -> Iterator[None]:
    """An error of one side's input (a ``ProfileError``, an ``OutOfMemory``, a ``StepError`` refusing that side's
    step) raised inside names ``side`` ("base side", "comparison side", "both sides"), unless an inner
    ``on_side`` named it already."""
    try:
        yield
    except (ProfileError, OutOfMemory, StepError) as exc:
        if exc.side is None:
            exc.side = side
            exc.args = (str(exc),) if isinstance(exc, ProfileError) else (exc.said(),)
        raise
