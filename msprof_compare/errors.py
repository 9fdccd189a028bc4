"""The failures a run can end with: bad usage (``UsageError``, ``StepError``: exit 2), bad data
(``ProfileError``: exit 1) and memory that ran out on a known file (``OutOfMemory``: exit 1).

Loaders and comparators raise these for what they detect, so the faces (CLI, script, API) can map
them to exit codes and one-line messages.
"""

from __future__ import annotations

import os

from .units import Unit, unit_label


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

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        text = f"{unit_label(self.rank)}: {text}" if self.rank is not None else text
        return f"{text} ({self.hint})" if self.hint else text

    def __reduce__(self) -> tuple[type, tuple[str | None, str, str | None], dict[str, object]]:
        """Picklable (a worker process or a Dask/Ray task can send it back as it is): every attribute it carries,
        what a rank-by-rank compare adds too (``api._rank_error``: ``rank``, ``rank_inputs``, the message naming
        the unit), as ``OutOfMemory``."""
        return (type(self), (self.path, self.message, self.hint), {**self.__dict__, "args": self.args})


class StepError(UsageError):
    """A requested --base_step/--comparison_step does not exist in the data (exit code 2)."""


class OutOfMemory(MemoryError):
    """Memory ran out while a known file was loaded or written: the CLI's out-of-memory line names it.

    ``doing`` completes "out of memory while ...": "loading it" or "writing the workbook"."""

    def __init__(self, path: str | os.PathLike, doing: str) -> None:
        self.path = os.fspath(path)
        self.doing = doing
        super().__init__(f"{self.path}: out of memory while {doing}")

    def __reduce__(self) -> tuple[type, tuple[str, str], dict[str, object]]:
        """Picklable with what a rank-by-rank compare adds (``api._rank_error``: ``rank``, ``rank_inputs`` and the
        message naming the unit): a worker process sends it back as it is, as a ``ProfileError``."""
        return (type(self), (self.path, self.doing), {**self.__dict__, "args": self.args})
