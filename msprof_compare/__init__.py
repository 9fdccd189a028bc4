"""msprof-compare: compare two deep-learning performance profiles.

The API: ``compare`` (one pair of profiles, a ``CompareResult``), ``ranks``, ``compare_ranks`` and
``ranks_overview`` (multi-rank runs); ``schema`` (the JSON reports' schemas); ``ProfileError`` / ``UsageError``
for bad data / bad options.
It (and pandas, numpy under it) loads on first use, so that the command-line entry points can install
their Ctrl-C handling before the imports that take most of the start-up time.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence  # loaded at Python's start: costs nothing

from . import compare as _comparators  # noqa: F401 - the (empty) sub-package first, so it never rebinds `compare`
from .errors import ProfileError, UsageError
from .units import RankCycle

#: ``typing.TYPE_CHECKING`` without importing ``typing``, whose import took longer than the rest of the package's:
#: the console entry points install their Ctrl-C handling only once the package is imported.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import msprof_compare

    from .api import CompareResult, GateContributor, GateStep, RegressionGate  # noqa: F401
else:
    #: The package itself, so that the annotation ``msprof_compare.CompareResult`` below resolves at run time
    #: (``typing.get_type_hints``) through ``__getattr__``, which imports the API then: a bare ``CompareResult``
    #: is no name here until it is imported, and importing it up front would load pandas for ``--help`` too.
    msprof_compare = sys.modules[__name__]

__all__ = ["compare", "compare_ranks", "ranks", "ranks_overview", "schema", "CompareResult", "GateContributor",
           "GateStep", "ProfileError", "RankCycle", "RegressionGate", "UsageError"]
__version__ = "0.1.0"


def compare(base: str | os.PathLike[str], comparison: str | os.PathLike[str],
            **options: object) -> msprof_compare.CompareResult:
    """Compare two profiles (``base``, ``comparison``: a trace file or a profiler's output folder, as ``str``,
    ``bytes`` or ``pathlib.Path``); the options are the CLI's long flag names without the dashes.

    Any option given as None is its default. On/off options take a bool (Python or NumPy) or a number that is 0 or
    1 by the integer options' rule below (``1.0``, ``Decimal("1")``; not ``"true"``); with no ``enable_*`` option
    every comparison runs:
    ``enable_profiling_compare``, ``enable_operator_compare``, ``enable_memory_compare``,
    ``enable_communication_compare``, ``enable_api_compare``, ``enable_kernel_compare``,
    ``disable_details``, ``disable_module``, ``use_input_shape``, ``use_kernel_type``, ``force``, ``debug``.
    Values: ``max_kernel_num`` (int > 3), ``op_name_map`` (a dict of str, or its literal as text),
    ``transparent_op`` (an op name or a list of them: ops matched through, as if their events were removed),
    ``gpu_flow_cat`` (str), ``base_step`` / ``comparison_step`` (whole numbers >= 0, both or neither; NPU data),
    ``output_format`` (``"xlsx"``, ``"json"`` or ``"xlsx,json"``) and ``fail_on_regression`` (percent).
    An integer option takes an int, a whole float, NumPy number, ``Decimal`` or ``Fraction`` (``3.0``,
    ``np.int64(3)``, ``Decimal("3")``) or its digits as text; ``3.5`` is refused, never truncated.

    Writes nothing (``output_format`` / ``fail_on_regression`` are only kept in ``result.options``): call the
    result's ``to_excel`` / ``to_json`` / ``regression_gate`` (without a percentage, by ``fail_on_regression``).
    Raises ``UsageError`` for bad options, naming the
    keyword and the value (the original's messages, which the tool keeps, name the keyword alone: a
    ``max_kernel_num`` of 3 or less, an ``op_name_map`` that is no dict of text, a ``gpu_flow_cat`` over 20
    characters; its subclass ``StepError`` for a step the data lacks), and ``ProfileError`` for bad
    data, with the CLI's message; errors and warnings name the options as keywords (``add force=True``), not
    as the CLI's flags.
    See the README's option table for what each does.
    """
    from .api import compare as run

    return run(base, comparison, **options)


def ranks(folder: str | os.PathLike[str], force: bool = False) -> dict[int | RankCycle, str]:
    """{rank id: input path} of a folder holding one profile per rank of a multi-rank run, in rank order (the
    rank the profiler recorded: an NPU profiling directory's ``profiler_info_N.json``, a Kineto trace's
    ``distributedInfo.rank``). A folder of a profiler schedule's cycles (every rank held n times, or n profiles of
    a single device) maps ``RankCycle(rank, cycle)`` (rank None for a single device) to paths instead, cycle by
    cycle in recorded order. Raises ``ProfileError`` for a folder of no rank, an input without a rank id or ranks
    held different numbers of times; without ``force`` (as ``compare``), for a symbolic link it would read through
    (a rank's folder, its ASCEND_PROFILER_OUTPUT), as the loader refuses it."""
    from .api import ranks as found

    return found(folder, force)


def compare_ranks(base: str | os.PathLike[str], comparison: str | os.PathLike[str],
                  **options: object) -> Iterator[tuple[int | RankCycle, msprof_compare.CompareResult]]:
    """``compare`` of two folders of ranks, rank by rank: yields ``(rank, CompareResult)`` for each rank both hold,
    in rank order, one rank loaded per step (``del`` the result at the end of the loop body to keep one alive).
    Options as ``compare``'s; the folders are read and the options checked on the call, a one-sided rank is
    warned about, no rank in common raises ``ProfileError``, and a rank's error names the rank first. A rank's log
    lines begin with ``rank N: `` and a later rank's repeats are left out, as on the CLI (``api.rank_results``).
    The iterator's ``not_compared`` is {rank: (base input, comparison input)} of the ranks one folder alone holds
    (None on the side without it), for ``ranks_overview``. ``rank_list`` ("all", "0,3" or a sequence of ids, as the
    CLI's ``--rank_list``) compares the listed ranks alone. Folders of a profiler schedule's cycles on both sides
    compare cycle k with cycle k, rank by rank: the unit is then ``RankCycle(rank, cycle)`` (rank None for a single
    device's cycles) in place of the rank id, cycle by cycle; one folder of cycles against one without raises
    ``ProfileError``."""
    from .api import compare_ranks as run

    return run(base, comparison, **options)


#: A path of ``ranks_overview``'s ``reports`` and ``not_compared``: as text or a path object (or bytes, as every path
#: argument of the API)
_Input = str | os.PathLike[str]


def ranks_overview(results: Iterable[tuple[int | RankCycle, msprof_compare.CompareResult]],
                   reports: Mapping[int | RankCycle, _Input | Sequence[_Input]] | None = None,
                   not_compared: Mapping[int | RankCycle, tuple[_Input | None, _Input | None]] | None = None,
                   rank_list: str | int | Iterable[int] | None = None) -> dict[str, object]:
    """The job overview of ``compare_ranks``' results, as the CLI writes it to
    ``performance_comparison_result_ranks_*.json``: a record per rank (times in ns and ms, their changes, the gate's
    verdict with ``fail_on_regression``, ``reports[rank]``' file names, the inputs) and the job's slowest rank per
    side, and the ranks not compared (``not_compared``, else those of ``compare_ranks``' iterator given itself).
    Takes the iterator itself: each result gives its figures and is dropped before the next rank loads; one that has
    given ranks already (a loop over it, a ``next``) raises ``UsageError``, as the overview would leave them out.
    ``rank_list`` ("all", "0,3" or a sequence of ids, as ``compare_ranks`` takes it): the ranks selected, which the
    document records over the iterator's own (results gathered by hand carry none). A rank given twice (or both
    compared and not, or not in ``rank_list``), a ``reports`` key that is no rank compared, results judged by
    different thresholds or none at all, and anything but ``(rank, CompareResult)`` pairs (a dict of rank ->
    result: pass its ``.items()``) raise ``UsageError``. Units may be ``RankCycle`` (folders of cycles): each
    record then holds its ``cycle``."""
    from .api import ranks_overview as build

    return build(results, reports, not_compared, rank_list)


#: The schemas ``schema`` gives: name -> file under ``msprof_compare/schemas/`` (package data, so in every install)
_SCHEMAS = {"result": "result.schema.json", "ranks": "ranks.schema.json"}


def schema(name: str) -> dict[str, object]:
    """The JSON Schema (2020-12) of a JSON report, parsed: ``"result"`` for a comparison's
    (``--output_format json``, ``CompareResult.to_json``), ``"ranks"`` for a rank-by-rank job overview
    (``performance_comparison_result_ranks_*.json``, ``ranks_overview``). A document's ``$schema`` is a URN, not a
    URL, so a script installed by pip (no checkout, no docs/) validates against this. A new dict on each call.
    Raises ``UsageError`` naming the known names for any other."""
    if not isinstance(name, str) or name not in _SCHEMAS:
        known = " and ".join(repr(n) for n in _SCHEMAS)
        raise UsageError(f"schema: unknown schema {name!r:.80}; the known ones are {known}")
    import json
    from importlib.resources import files

    return json.loads((files(__name__) / "schemas" / _SCHEMAS[name]).read_text(encoding="utf-8"))


def __dir__() -> list[str]:
    """The API (``__all__``), ``__version__`` and the module's dunders: ``dir(msprof_compare)`` and a shell's
    completion listed ``os``, ``sys``, ``Iterable``, ``TYPE_CHECKING`` and the sub-modules loaded so far, names that
    are the package's plumbing, not what it offers (``help()`` reads ``__all__`` itself)."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__") and name.endswith("__"))})


#: The API's classes, imported from ``api`` (with pandas) on first use.
_API_CLASSES = ("CompareResult", "GateContributor", "GateStep", "RegressionGate")


def __getattr__(name: str) -> object:
    if name in _API_CLASSES:
        from . import api

        found = globals()[name] = getattr(api, name)
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
