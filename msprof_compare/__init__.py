"""msprof-compare: compare two deep-learning performance profiles.

The API (and pandas, numpy under it) loads on first use, so that the command-line entry points can
install their Ctrl-C handling before the imports that take most of the start-up time.
"""

from __future__ import annotations

import os
import sys

from . import compare as _comparators  # noqa: F401 - the (empty) sub-package first, so it never rebinds `compare`
from .errors import ProfileError, UsageError

#: ``typing.TYPE_CHECKING`` without importing ``typing``, whose import took longer than the rest of the package's:
#: the console entry points install their Ctrl-C handling only once the package is imported.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import msprof_compare

    from .api import CompareResult
else:
    #: The package itself, so that the annotation ``msprof_compare.CompareResult`` below resolves at run time
    #: (``typing.get_type_hints``) through ``__getattr__``, which imports the API then: a bare ``CompareResult``
    #: is no name here until it is imported, and importing it up front would load pandas for ``--help`` too.
    msprof_compare = sys.modules[__name__]

__all__ = ["compare", "CompareResult", "ProfileError", "UsageError"]
__version__ = "0.1.0"


def compare(base: str | os.PathLike[str], comparison: str | os.PathLike[str],
            **options: object) -> msprof_compare.CompareResult:
    """Compare two profiles; options are the CLI's flag names (e.g. ``enable_profiling_compare=True``).

    Writes nothing (``output_format`` / ``fail_on_regression`` are only kept in ``result.options``): call the
    result's ``to_excel`` / ``to_json`` / ``regression_gate``. Raises ``UsageError`` for bad options and
    ``ProfileError`` for bad data. See ``msprof_compare.api``.
    """
    from .api import compare as run

    return run(base, comparison, **options)


def __getattr__(name: str) -> object:
    if name == "CompareResult":
        from .api import CompareResult

        globals()[name] = CompareResult
        return CompareResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
