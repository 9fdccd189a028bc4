"""msprof-compare: compare two deep-learning performance profiles.

The API (and pandas, numpy under it) loads on first use, so that the command-line entry points can
install their Ctrl-C handling before the imports that take most of the start-up time.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from . import compare as _comparators  # noqa: F401 - the (empty) sub-package first, so it never rebinds `compare`
from .errors import ProfileError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from .api import CompareResult

__all__ = ["compare", "CompareResult", "ProfileError", "UsageError"]
__version__ = "0.1.0"


def compare(base: str | os.PathLike[str], comparison: str | os.PathLike[str], **options: Any) -> CompareResult:
    """Compare two profiles; options are the CLI's flag names (e.g. ``enable_profiling_compare=True``).

    Raises ``UsageError`` for bad options and ``ProfileError`` for bad data. See ``msprof_compare.api``.
    """
    from .api import CompareResult
    from .api import compare as run

    globals()["CompareResult"] = CompareResult  # from now on the annotation above resolves at run time too
    return run(base, comparison, **options)


def __getattr__(name: str) -> Any:
    if name == "CompareResult":
        from .api import CompareResult

        globals()[name] = CompareResult
        return CompareResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
