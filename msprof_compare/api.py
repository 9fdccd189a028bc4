"""The Python API: ``compare(base, comparison, **options)``.

The CLI and ``performance_compare.py`` are thin layers over this function:
path -> loader -> Profile -> comparators -> sheets -> reporters.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import logging
import numbers
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .columns import col_of
from .compare import classify
from .compare.classify import Keywords
from .compare.table import Sheet
from .errors import ConfigError, OutOfMemory, ProfileError, UsageError, on_side
from .gcpause import gc_paused
from .loaders import Layout, detect, load_profile
from .loaders.heads import TraceHeads
from .loaders.paths import TypedPaths, check_size_caps, given_path
from .logs import RankNotices, api_worded, paths_as_typed, said_once
from .model import FRAMEWORK_LABEL, PROFILE_FRAMES, Profile, SideNote, framework_label, pair_has_ops
from .options import (
    API_FACE,
    CLI_FACE,
    RANKS_FACE,
    Face,
    Options,
    checked_options,
    flag_words_kept,
    parse_rank_list,
)
from .textsafe import display, shell_word, term_safe
from .units import RankCycle, Unit, named_units, unit_label, unit_noun, unit_order, unit_rank

log = logging.getLogger("msprof-analyze")

#: Inputs at least this large (both sides, data files) get a line before and after loading.
LOAD_NOTICE_BYTES = 200_000_000


@dataclass
class RunContext:
    """What every comparator receives: both profiles, the options, and a per-run
    cache for intermediate results shared between comparators (op trees, the
    operator pairing used by both the operator and memory sheets)."""

    base: Profile
    comparison: Profile
    options: Options
    cache: dict[str, Any] = field(default_factory=dict)
    #: The keyword lists of the time breakdown when read before loading (``compare``); else read when needed.
    keywords: Keywords | None = None
    #: Console summary (title, headers, rows), set by the overall comparator.
    summary: dict[str, Any] | None = None
    #: Extra result frames for the API (match rates, waterfall, ...), by name.
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: The warning that both sides are one profile (``_same_input``, ``_same_events``), "" for two profiles.
    same: str = ""
    #: In a rank-by-rank run (``rank_results``), the ``--transparent_op`` names checked and those found in some
    #: rank, shared by its ranks: a rank without a name is warned of, a name no rank has is refused at the end.
    ranks_transparent: tuple[set[str], set[str]] | None = None

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per run: comparators that need the same intermediate (an op tree, the operator
        pairing) share it instead of each rebuilding it."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def has_ops(self, p: Profile) -> bool:
        """Whether side ``p`` has ops to pair in this run, decided for the pair (``model.pair_has_ops``): a GPU
        trace of runtime calls alone (annotations aside) has none against a side with framework ops, but keeps them
        against its like. The op trees, the sheets that pair ops, the Summary's operator statistic and match rate
        and the one-sided warning all ask here."""
        both = self.cached("pair.has_ops", lambda: pair_has_ops(self.base, self.comparison))
        return both[p is self.comparison]

    def side(self, p: Profile) -> str:
        """How a line about side ``p`` names it, last, as a loader's notes do (``errors.side_named``): "base side",
        "comparison side", or "both sides" for one input on both (one path, one step), whose two lines are one text,
        said once (``logs.said_once``)."""
        if self.base.path == self.comparison.path and self.options.base_step == self.options.comparison_step:
            return "both sides"
        return "comparison side" if p is self.comparison else "base side"


Comparator = Callable[[RunContext], list[Sheet]]


def comparators(opts: Options) -> list[tuple[str, Comparator]]:
    """The comparators to run, in the original's sheet order (reference-2 §1.2)."""
    from .compare import api_stats, communication, kernels, memory, operators, overall

    table: list[tuple[bool, str, Comparator]] = [
        (opts.enable_profiling_compare, "profiling", overall.build),
        (opts.enable_communication_compare, "communication", communication.build),
        (opts.enable_operator_compare, "operator", operators.build),
        (opts.enable_memory_compare, "memory", memory.build),
        (opts.enable_api_compare, "api", api_stats.build),
        (opts.enable_kernel_compare, "kernel", kernels.build),
    ]
    return [(name, _gc_paused(build)) for on, name, build in table if on]


def _gc_paused(build: Comparator) -> Comparator:
    """``build`` run with the cyclic GC paused: the operator and memory comparators make millions of
    rows, cells and tree nodes that live to the end of the run, and every GC pass walked them all
    (the real GPT pair of 566 / 482 MB: 1.46 of the operator stage's 6.0 s, 0.31 of memory's 1.33 s)."""

    @functools.wraps(build)
    def run(ctx: RunContext) -> list[Sheet]:
        with gc_paused():
            return build(ctx)

    return run


class GateContributor(NamedTuple):
    """A contributor the regression gate lists (one that grew), as the JSON report's ``gate.contributors[]``
    names it: ``diff_ms`` unrounded (the line shows 3 decimals), ``share`` a fraction of ``share_of``."""

    name: str
    level: str
    diff_ms: float
    share: float
    share_of: str


class GateStep(NamedTuple):
    """A waterfall step the gate's "Largest waterfall steps" line names, as ``gate.waterfall_steps[]``: its change
    with its sign, in whole ns and in ms."""

    step: str
    delta_ns: int
    delta_ms: float


class _CodeAndMessage(NamedTuple):
    code: int
    message: str


class RegressionGate(_CodeAndMessage):
    """What ``CompareResult.regression_gate`` returns: the tuple ``(code, message)`` it always returned (``code,
    message = result.regression_gate(5)`` and ``== (3, "...")`` still work), with the verdict's figures as
    attributes named as the JSON report's ``gate`` keys, so that a script posting which metric tripped the gate
    and by how much need not parse ``message``: ``regressed`` (True: code 3, False: 0, None: 1, not judged),
    ``threshold_pct`` and ``threshold`` (the decimal the line states), ``diff_ns`` / ``diff_ms`` (the E2E change
    judged; None where not judged), ``base_ns`` / ``comparison_ns`` (the E2E times judged; None without them),
    ``contributors`` (``GateContributor``), ``waterfall_steps`` (``GateStep``) and ``lines``; ``to_dict()`` is
    the JSON's ``gate`` object (``exit_code`` is ``code``). Immutable, and it pickles. One made of a
    ``(code, message)`` alone (``RegressionGate(0, "...")``, ``_make``: a script's test double) has no figures:
    None and empty tuples, where its repr raised AttributeError."""

    threshold_pct: float | None = None
    threshold: str | None = None
    diff_ns: int | None = None
    diff_ms: float | None = None
    base_ns: int | None = None
    comparison_ns: int | None = None
    contributors: tuple[GateContributor, ...] = ()
    waterfall_steps: tuple[GateStep, ...] = ()

    @classmethod
    def of(cls, code: int, message: str, pct: float, contributors: Iterable[GateContributor] = (),
           steps: Iterable[GateStep] = (), e2e: tuple[int, int] | None = None) -> RegressionGate:
        """The gate's verdict at ``pct`` percent, as ``compare.gate.judge`` reaches it: its code and message, the
        contributors that grew and the waterfall steps, as the message lists them, and the (base, comparison) E2E in
        whole ns it judged (None where the run had no time breakdown)."""
        from .compare.gate import threshold_text
        from .report.json_report import change

        gate = cls(code, message)
        base, comp = e2e if e2e is not None else (None, None)
        diff = None if e2e is None else change(base, comp)["diff_ns"]  # None beside a side without E2E
        fields = {
            "threshold_pct": float(pct), "threshold": threshold_text(pct),
            "diff_ns": diff, "diff_ms": None if diff is None else diff / 1e6,
            "base_ns": base, "comparison_ns": comp,
            "contributors": tuple(contributors), "waterfall_steps": tuple(steps),
        }
        gate.__dict__.update(fields)
        return gate

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a regression gate's result cannot be changed ({name})")

    def __delattr__(self, name: str) -> None:  # del gate.diff_ns dropped the figure, to the class's None
        raise AttributeError(f"a regression gate's result cannot be changed ({name})")

    def _replace(self, **changes: Any) -> RegressionGate:
        """The namedtuple's copy with ``changes``, its figures kept (the tuple's own left it without them)."""
        copy = super()._replace(**changes)
        copy.__dict__.update(self.__dict__)
        return copy

    def __repr__(self) -> str:
        return (f"RegressionGate(code={self.code}, regressed={self.regressed}, threshold={self.threshold!r}, "
                f"diff_ms={self.diff_ms}, contributors={len(self.contributors)}, "
                f"waterfall_steps={len(self.waterfall_steps)}, message={self.message!r})")

    @property
    def regressed(self) -> bool | None:
        """True for code 3, False for 0, None (not judged) for 1: of ``code``, so a ``_replace(code=...)`` copy
        does not keep the verdict of another code."""
        return {3: True, 0: False}.get(self.code)

    @property
    def lines(self) -> list[str]:
        """``message``, a line each (the JSON's ``gate.lines``)."""
        return self.message.split("\n")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``gate`` object (msprof_compare/schemas/result.schema.json): ``exit_code`` is ``code``.
        It holds ``base_ns`` / ``comparison_ns``, the two times the first line states, so that the record alone
        (``jq .gate``, a CI bot's post) restates it: they were attributes only."""
        return {"threshold_pct": self.threshold_pct, "threshold": self.threshold, "exit_code": self.code,
                "regressed": self.regressed, "base_ns": self.base_ns, "comparison_ns": self.comparison_ns,
                "diff_ns": self.diff_ns, "diff_ms": self.diff_ms, "lines": self.lines,
                "contributors": [c._asdict() for c in self.contributors],
                "waterfall_steps": [s._asdict() for s in self.waterfall_steps]}


@dataclass
class CompareResult:
    """The outcome of one comparison: the sheets (``.sheet(name)`` gives one as a DataFrame), the console summary
    and the Summary's frames, so that a script reads the figures without writing or parsing a workbook."""

    base: Profile
    comparison: Profile
    options: Options
    sheets: list[Sheet]
    summary: dict[str, Any] | None
    frames: dict[str, pd.DataFrame]
    #: The gate input where the run made no time breakdown: the frames ``regression_gate`` reads
    #: (``gate.gate_frames``) or its "error: ..." message, made once when the gate is first applied, or by
    #: ``slim`` for its copy; None: not made yet.
    _gate: dict[str, pd.DataFrame | None] | str | None = field(default=None, repr=False, compare=False)
    #: The gate's verdicts by threshold (``gate.verdict_of``), before the face words its message: a run that writes
    #: the JSON report (its ``gate``) and then applies the gate judged the same result twice. Shared by a slim copy,
    #: whose every method answers as this result's.
    _verdicts: dict[float, RegressionGate] = field(default_factory=dict, repr=False, compare=False)
    #: Whether the run found one input on both sides (``one_input``), told from the paths as given: ``base`` and
    #: ``comparison`` may be named by their text (``named_as``: ``bad\\xff`` for a name that is not UTF-8), on which
    #: the file system finds no input, so the gate said "(base side)" of such an input given twice.
    _one_input: bool = field(default=False, repr=False, compare=False)

    def __repr__(self) -> str:
        # the generated repr printed both profiles' tables and every sheet's frame (59 KB for the README's pair)
        verdict = self.verdict
        return (f"CompareResult(base={self.base!r}, comparison={self.comparison!r}, sheets={self.sheet_names!r}"
                + (f", verdict={verdict!r})" if verdict else ")"))

    def slim(self) -> CompareResult:
        """A copy without the profiles' event tables, cheap to pickle back from a cluster task (docs/performance.md,
        "Beyond one machine"); every method answers as on this result, which keeps its tables. Its ``base`` and
        ``comparison`` keep what those methods read (path, kind, source, level, a DB step's range); their reprs
        show no table sizes, as their tables are empty. The ``sheets`` list and ``frames`` dict are new, their items
        the same objects as this result's (the methods hand out copies; a pickle is a copy). Without a time
        breakdown in the run, the one ``regression_gate`` makes is made now."""
        gate = self._gate
        if gate is None and "e2e" not in self.frames:
            from .compare.gate import gate_frames

            gate = gate_frames(self)
        return dataclasses.replace(self, base=_slim_profile(self.base), comparison=_slim_profile(self.comparison),
                                   sheets=list(self.sheets), frames=dict(self.frames), _gate=gate)

    def sheet(self, name: str) -> pd.DataFrame:
        """One sheet's data as a DataFrame (``Sheet.frame``): display headers, each column typed by its cells with
        blanks missing (whole numbers ``Int64`` where a cell is blank, else int64; other numbers float64; text
        pandas' string dtype); a new copy on each call; ``KeyError`` naming the sheets held for another name."""
        for s in self.sheets:
            if s.name == name:
                return s.frame()
        # the sheets it holds: a run's flags decide them, and a KeyError naming only the missing one sent the
        # user to print sheet_names
        raise KeyError(f"no sheet {name!r} in this result; it holds {', '.join(self.sheet_names) or 'none'}")

    @property
    def sheet_names(self) -> list[str]:
        """The names in workbook order, to test for a sheet without building any DataFrame."""
        return [s.name for s in self.sheets]

    def to_excel(self, target: str | os.PathLike[str] = ".") -> str:
        """Write the workbook into a directory (or to a file path); returns the file written, "" when no sheet has
        a row (nothing is written then, as by the CLI). A ``.json`` path writes the workbook of its stem
        (``run.json``: ``run.xlsx``, with a warning), as the CLI's ``-o run.json`` does."""
        from .report.deliver import api_folder_notice, api_report_file
        from .report.excel import resolve_target, workbook_part, write_workbook

        target, named = api_report_file(target, ".xlsx")  # "run.json": run.xlsx, as the CLI's -o run.json
        notice = named or api_folder_notice(target, ".xlsx")  # before the write, which makes the folder
        with _api_words(target):
            if workbook_part(self) is None:
                # nothing to write, but the target is judged as -o is before any load: to_excel("notes.txt") of
                # a file returned "" where the CLI's -o notes.txt exits 2, and the next run's rows would fail
                resolve_target(target, self.options.force)
            return _noted(write_workbook(self, target), notice)

    def console_table(self) -> str:
        """The "Model Profiling Time Distribution" table as printed on screen ("" if none)."""
        from .report.console import render_summary

        return render_summary(self.summary) if self.summary else ""

    @property
    def waterfall(self) -> pd.DataFrame:
        """Base E2E -> comparison E2E in steps (empty when no time breakdown was made, or a side has no E2E time)."""
        return self._frame("waterfall")

    @property
    def contributors(self) -> pd.DataFrame:
        """The rows explaining 80% of their level's absolute change (device time; at category level, the
        waterfall steps'), largest first."""
        return self._frame("contributors")

    @property
    def module_contributors(self) -> pd.DataFrame:
        """Where a contributor runs modules whose rows hold its time (DDP's ``DistributedDataParallel.forward``),
        the ModuleCompareStatistic operator rows ("module path > operator") inside those contributors (the rows of
        the modules they run, not every module row) whose Device Self Time changes explain 80% of those rows'
        summed absolute change, largest first; empty otherwise."""
        return self._frame("module_contributors")

    @property
    def communication_contributors(self) -> pd.DataFrame:
        """The op types of CommunicationCompare (``allreduce``...) whose total duration changes (ms) explain 80% of
        the summed absolute change of its op rows, largest first (empty without that sheet, when no op type's
        total changed, or when an NPU side recorded no communication op: its 0 is no change; a GPU trace without
        any collective kernel reads 0 ms, a reading, so the other side's op types are listed)."""
        return self._frame("communication_contributors")

    @property
    def communication_totals(self) -> dict[str, Any] | None:
        """Each side's communication time (ms, the sums of CommunicationCompare's op rows) with its change, and the
        task (``Notify_Wait``...) whose total changed most, as JSON ``summary.communication`` holds them; None
        without CommunicationCompare. A figure a side did not record is None, and so is its change."""
        from .report.json_report import communication_totals

        return communication_totals(self.frames)

    @property
    def memory_contributors(self) -> pd.DataFrame:
        """The operators of MemoryCompareStatistic whose ``Diff Memory(MB)`` explain 80% of the summed absolute
        change of its rows, largest first (empty without that sheet, when no operator's memory changed, or when
        a side recorded no memory: its 0 MB is no change)."""
        return self._frame("memory_contributors")

    @property
    def memory_totals(self) -> dict[str, Any] | None:
        """Memory allocated inside the compared operators (MB) and peak reserved memory (GB, the console's Mem
        Usage) of each side, with their changes, as JSON ``summary.memory`` holds them; None without
        MemoryCompareStatistic. A figure a side did not record is None, and so is its change.
        ``peak_whole_profile``: the sides with a peak that is the whole profile's while a step was asked (text
        exports: memory_record.csv ignores the step); ``peak_zero``: {side: why} where a side's 0 peak is the
        largest of readings that are all 0; ``peak_app``: {"side", "peak_without_app_gb", "beside": "db" or "gpu"}
        where a text export's peak counts memory_record.csv's APP component beside a peak without one, else None."""
        from .report.json_report import memory_totals

        return memory_totals(self.frames)

    @property
    def verdict(self) -> str:
        """Which side is slower and by how much, in words, as under the console's waterfall ("" without one), without
        the final period the console and the Summary sheet add (JSON ``summary.verdict`` is the same text):
        ``"E2E time 3.908 ms -> 3.496 ms (-0.412 ms, -10.54%): the comparison is faster than the base"``; where an
        idle stretch makes most of the difference, a second sentence after a line break says so."""
        from .compare.verdict import run_verdict

        wf = self.frames.get("waterfall")
        return run_verdict(self, wf) if wf is not None and len(wf) else ""

    @property
    def guards(self) -> pd.DataFrame:
        """Validity checks (Status "warn": the sides are probably not the same workload; "note": a difference
        that holds for the same workload too, such as the GPU vendor, and changes how figures compare)."""
        return self._frame("guards")

    def _frame(self, name: str) -> pd.DataFrame:
        """A copy of the Summary frame ``name`` (the Summary sheet and to_json read the frame itself) with its
        columns and dtypes whether or not it has a row: an empty one was a frame of no column (a GPU pair's
        ``communication_contributors["Diff(ms)"]`` raised KeyError) or of object columns. A column the frame
        keeps as object (None for "not defined") gets its schema's dtype, blanks missing."""
        schema = _frame_schema(name)
        frame = self.frames.get(name)
        if frame is None or not len(frame):
            return pd.DataFrame({c: pd.Series(dtype=t) for c, t in schema.items()})
        out = frame.copy()
        for i, (c, dtype) in enumerate(out.dtypes.items()):
            target = schema.get(str(c), object)
            if getattr(dtype, "kind", "") == "O" and target is not object:
                out.isetitem(i, out.iloc[:, i].astype(target))
        return out

    def to_json(self, target: str | os.PathLike[str] = ".") -> str:
        """Write the JSON result into a directory, to a ``.json`` path, or to stdout ("-"); returns the path written
        ("-" for stdout). Like ``to_excel``, it never replaces a file: a taken name gets a ``_1``, ``_2``... suffix; and
        a ``.xlsx`` path writes the JSON of its stem (``run.xlsx``: ``run.json``, with a warning)."""
        from .report.deliver import api_folder_notice, api_report_file
        from .report.json_report import write_json

        target, named = api_report_file(target, ".json")  # "run.xlsx": run.json, as the CLI's -o run.xlsx
        notice = named or api_folder_notice(target, ".json")  # before the write, which makes the folder
        with _api_words(target):  # the gate's lines too name the options as compare() takes them
            return _noted(write_json(self, target, face=API_FACE), notice)

    def regression_gate(self, pct: float | str | None = None) -> RegressionGate:
        """(3, message) when comparison E2E exceeds base E2E by more than ``pct`` percent, (1, message) when a
        side has no E2E time to judge by, else (0, message). Works whichever comparisons ran. ``pct`` is read
        as ``--fail_on_regression`` reads it (``5``, ``"5%"``); one that is no percentage >= 0 raises
        ``UsageError``. Left out (None), it is the ``fail_on_regression`` this result was compared with, the
        threshold its JSON report's ``gate`` judged by: ``compare(..., fail_on_regression=5).regression_gate()``
        said only "needs a percentage"; without either it raises ``UsageError`` naming both ways. Its messages name
        this method where the CLI's name ``--fail_on_regression``. The ``(code, message)`` tuple is a
        ``RegressionGate``: its attributes give the change judged, the contributors and the waterfall steps listed,
        as the JSON's ``gate`` does."""
        from .options import parse_regression_pct

        if pct is None:
            value = self.options.fail_on_regression
            if value is None:
                raise UsageError("regression_gate needs a percentage: pass one (regression_gate(5) or "
                                 "regression_gate('5%')), or compare with fail_on_regression=5")
            return judge_regression(self, value, API_FACE)
        value = None if isinstance(pct, str) and not pct else parse_regression_pct(pct, "pct")  # "" gets this line
        if value is None:
            raise UsageError("regression_gate needs a percentage (a finite number >= 0)")
        return judge_regression(self, value, API_FACE)


def judge_regression(result: CompareResult, pct: float, face: Face, method: bool = True) -> RegressionGate:
    """``CompareResult.regression_gate`` of a validated ``pct``, its message naming the options as ``face`` takes
    them (the CLI's ``--fail_on_regression`` gate calls it with the CLI's face; ``method``: see
    ``gate.verdict_of``)."""
    from .compare import gate

    return gate.verdict_of(result, pct, face, method)


def _slim_profile(profile: Profile) -> Profile:
    """``profile`` as ``CompareResult.slim`` keeps it: what the result's methods read of it (path, kind, source and
    level: the workbook's captions, JSON ``base`` / ``comparison``, the verdict's and the gate's words; a DB step's
    ``extra["step_range"]``: ``verdict.e2e_aside``; the JSON's framework, ``model.FRAMEWORK_LABEL``, which the
    tables tell); its tables empty."""
    extra = {"step_range": profile.extra["step_range"]} if "step_range" in profile.extra else {}
    extra[FRAMEWORK_LABEL] = framework_label(profile)
    return Profile(profile.path, profile.kind, profile.source, profile.level, extra=extra)


def _frame_schema(name: str) -> dict[str, Any]:
    """The columns and dtypes of the Summary frame ``name`` as the API returns it (``CompareResult._frame``)."""
    from .compare import communication_summary, contributors, memory_summary, waterfall
    from .compare.table import TEXT_DTYPE

    def ranked(columns: list[str]) -> dict[str, Any]:
        return {c: "int64" if c == "Rank" else TEXT_DTYPE if c in ("Level", "Name") else "float64" for c in columns}

    if name == "waterfall":
        return {c: TEXT_DTYPE if c in ("Step", "Category") else "float64" if c == "Cumulative(ms)"
                else "Int64" if c.endswith("(ns)") else "Float64" for c in waterfall.WATERFALL_COLUMNS}
    if name == "guards":  # Base / Comparison: a rate, a count or a name, by row
        return {"Check": TEXT_DTYPE, "Status": TEXT_DTYPE, "Base": object, "Comparison": object, "Detail": TEXT_DTYPE}
    module = {"communication_contributors": communication_summary, "memory_contributors": memory_summary}
    return ranked(module.get(name, contributors).CONTRIBUTOR_COLUMNS)


def _noted(written: str, notice: str) -> str:
    """``written``, after ``notice`` (the CLI's warning for an ``-o results.csv``, which becomes a folder) when a
    report was written: a notebook's ``to_excel("results.csv")`` made a folder without a word."""
    if written and notice:
        log.warning(term_safe(notice))
    return written


def _path(role: str, value: Any) -> str:
    """A path argument as text: ``str``, ``bytes`` or any ``os.PathLike`` (``pathlib.Path``), as every path argument
    of the API takes it (``compare``, ``ranks``, ``compare_ranks``, ``ranks_overview``, ``to_excel``, ``to_json``)."""
    try:
        return _path_text(value)
    except TypeError:
        raise UsageError(f"{role} must be a path (str or os.PathLike), not {type(value).__name__}") from None


def _path_text(value: Any) -> str:
    """``_path`` without the message: TypeError for what is no path."""
    # str(): a str subclass (NumPy's np.str_ of a DataFrame cell) stayed one in the result's profiles
    return str(os.fsdecode(os.fspath(value)))


def _is_path(value: Any) -> bool:
    """Whether ``value`` is one path as the API takes it (not a list of them)."""
    return isinstance(value, str | bytes | os.PathLike)


def compare(base: str | os.PathLike[str], comparison: str | os.PathLike[str], **options: Any) -> CompareResult:
    """Compare two profiles; options are the CLI's flag names (e.g. ``enable_profiling_compare=True``).

    ``output_format`` and ``fail_on_regression`` are validated and kept in ``result.options`` for the CLI's
    writer and gate; this function writes nothing: call ``to_excel`` / ``to_json`` and ``regression_gate``.
    Raises ``UsageError`` for bad options and ``ProfileError`` for bad data; their messages and the warnings
    logged name the keyword arguments (``force=True``), not the CLI's flags.
    """
    with said_once():
        return _compare(base, comparison, options, API_FACE)


def cli_compare(base: str, comparison: str, options: dict[str, Any],
                heads: TraceHeads | None = None) -> CompareResult:
    """``compare()`` for the command-line faces: its errors and warnings name the CLI's flags (``--force``).
    ``heads``: the trace heads the CLI read already (``loaders.heads.TraceHeads``)."""
    with said_once():
        return _compare(base, comparison, options, CLI_FACE, heads)


def ranks(folder: str | os.PathLike[str], force: bool = False) -> dict[Unit, str]:
    """{rank id: input path} of a folder holding one profile per rank (``rank0_ascend_pt``, ... or one Kineto trace
    per rank), in rank order. The rank is the one the profiler recorded (``loaders.ranks``). A folder of a profiler
    schedule's cycles (each rank held n times, or n single-device profiles) maps ``RankCycle(rank, cycle)`` (rank
    None for a single device) to paths, cycle by cycle in recorded order. Raises ``ProfileError`` for a folder of no
    rank, an input without a rank id, or ranks held different numbers of times; without ``force`` (as ``compare``'s
    loader), for a symbolic link it would read through (a rank's folder, its ASCEND_PROFILER_OUTPUT)."""
    from .options import on_off

    # checked as compare()'s force is: ranks(folder, force="no") followed symbolic links
    return _discover(_path("folder", folder), on_off(force, "force"), API_FACE)


def _discover(folder: str, force: bool, face: Face, role: str = "", heads: TraceHeads | None = None,
              side: str | None = None) -> dict[Unit, str]:
    """``loaders.ranks.discover`` of a folder as typed, its errors naming the options as ``face`` takes them (a
    refused link's "add --force" reads "add force=True" in Python); traces' heads read through ``heads``. ``role``:
    "base" or "comparison" of a compare of two folders, named for an empty path; ``side``: the folder's in a
    compare ("base side", ...; ``_sides``), which discovery's warning names (None: a folder alone, ``ranks()``)."""
    from .loaders.paths import typed_path
    from .loaders.ranks import discover

    if not folder:  # the loader's "no such file or directory" named no path; compare() says this of an empty one
        where = {"base": "first", "comparison": "second"}.get(role) if face.api else None
        raise ProfileError(None, "The path is empty. Please enter a valid path.",
                           hint=f"the {role} folder: the {where} argument of compare_ranks()" if where else None)
    try:
        with on_side(side) if side else contextlib.nullcontext():
            return discover(typed_path(folder), force, heads, side)
    except ProfileError as exc:
        kept = flag_words_kept(folder, typed_path(folder), given_path(folder))
        _retype(exc, lambda text: face.words(text, kept))
        raise


def compare_ranks(base: str | os.PathLike[str], comparison: str | os.PathLike[str],
                  **options: Any) -> RankResults:
    """Compare two multi-rank runs rank by rank: ``(rank, CompareResult)`` for each rank both folders hold, in rank
    order, each made as ``compare`` makes it with the same options. Folders of a profiler schedule's cycles on both
    sides compare cycle k with cycle k: the unit is then ``RankCycle(rank, cycle)`` (rank None for a single
    device), cycle by cycle, ranks in rank order within a cycle. The folders and options are checked on the
    call (a one-sided rank or cycle is warned about; no rank in common raises ``ProfileError``); each unit is loaded
    when the next pair is asked for, so one result is alive at a time once the caller drops the previous one (``del``
    it at the end of the loop body: the loop variable holds it while the next rank loads). A unit's error is
    raised with ``rank N:`` (``rank N cycle k:``) before its message; its log lines are the CLI's
    (``rank_results``). The iterator's ``not_compared`` holds the one-sided units, which ``ranks_overview`` reads
    from it. ``rank_list`` (the CLI's ``--rank_list``: "all", "0,3" or a sequence of ids) compares the listed ranks
    alone, in every cycle (``rank_pairs``)."""
    options = dict(options)
    selected = parse_rank_list(options.pop("rank_list", None), "rank_list")
    from .loaders.paths import typed_path

    folders = _path("base", base), _path("comparison", comparison)
    heads = TraceHeads()  # discovery's, which the units' compares read again: each trace's head is read once
    pairs, alone = rank_pairs(*folders, options, RANKS_FACE, selected, heads)  # hints name compare_ranks
    return RankResults(rank_results(pairs, options, API_FACE, heads=heads), alone, selected,
                       (typed_path(folders[0]), typed_path(folders[1])), tuple(pairs))


class RankResults(Iterator[tuple[Unit, "CompareResult"]]):
    """``compare_ranks``' iterator: ``(unit, CompareResult)`` pairs (a rank id, or a ``RankCycle``), one unit loaded
    per step (``rank_results``), and ``not_compared``, {unit: (base input, comparison input)} of the units one folder
    alone holds (None on the side without it), of the same discovery of each folder: the job overview names them
    (``ranks_overview``); ``rank_list``, the ranks selected (None: all), which the overview records; ``folders``,
    the two folders given, the overview's job (a rank's input may lie a level down: a Kineto subfolder's cycles);
    ``units``, the units both folders hold, in the order they are compared; ``taken``, those it has given so far
    (a loop that used it up took them all, and ``ranks_overview`` of it would leave them out)."""

    def __init__(self, results: Generator[tuple[Unit, CompareResult], None, None],
                 not_compared: dict[Unit, tuple[str | None, str | None]],
                 rank_list: tuple[int, ...] | None = None,
                 folders: tuple[str | None, str | None] = (None, None), units: tuple[Unit, ...] = ()) -> None:
        self._results = results
        self.not_compared = not_compared
        self.rank_list = rank_list
        self.folders = folders
        self.units = units
        self.taken: list[Unit] = []

    def __repr__(self) -> str:
        # a notebook cell showing compare_ranks(...) printed "<msprof_compare.api.RankResults object at 0x...>":
        # nothing of what the call found in the folders, which it has read already
        selected = None if self.rank_list is None else list(self.rank_list)
        return (f"RankResults(base={self.folders[0]!r}, comparison={self.folders[1]!r}, units={list(self.units)!r}, "
                f"not_compared={list(self.not_compared)!r}, rank_list={selected!r})")

    def __next__(self) -> tuple[Unit, CompareResult]:
        unit, result = next(self._results)
        self.taken.append(unit)
        return unit, result

    def close(self) -> None:
        """Stop early, as a generator's ``close``: no count line of left-out notices is logged."""
        self._results.close()


def rank_pairs(base: str, comparison: str, options: dict[str, Any], face: Face,
               rank_list: tuple[int, ...] | None = None, heads: TraceHeads | None = None
               ) -> tuple[dict[Unit, tuple[str, str]], dict[Unit, tuple[str | None, str | None]]]:
    """{unit: (base input, comparison input)} of the units both folders hold, after the options are checked (a
    usage error before a folder is read), and the same of the units one folder alone holds, None on the side
    without it (named in one warning per side, and in the job overview: one rank discovery per folder). A unit is a
    rank, or where both folders hold a profiler schedule's cycles, a ``RankCycle``: cycle k of a rank against cycle
    k of that rank, cycles 1..the fewer side's count, those one side alone holds warned about per side; one folder
    of cycles against one without is an error saying what to pass. ``rank_list`` (``options.parse_rank_list``; None:
    every rank) selects ranks, in every cycle: those not listed are left out without a word, a listed rank one
    folder lacks is one-sided as above, one neither holds is warned about and not compared (None on both sides); no
    listed rank in common is an error naming the list. Traces' heads are read through ``heads``, the run's (a
    folder against itself reads each once)."""
    opts = checked_options(options, face)[0]
    force = opts.force
    check_size_caps(force)  # the job's, before a rank's compare named it "rank 0: ... (base side: ...)"
    if opts.time_breakdown:  # so is a bad MSPROF_COMPARE_CONFIG file, which rank 0's compare named "rank 0: ..."
        classify.load_keywords()
    heads = TraceHeads() if heads is None else heads
    with said_once():  # a folder given on both sides: its discovery's warnings (a trace named for another rank) once
        found = tuple(_discover(folder, force, face, role, heads, side) for folder, role, side in
                      zip((base, comparison), ("base", "comparison"), _sides(base, comparison), strict=True))
    cycles = [_cycles(side) for side in found]
    if bool(cycles[0]) != bool(cycles[1]) or (cycles[0] and _single(found[0]) != _single(found[1])):
        _refuse_cycles((base, comparison), found, cycles)
    if rank_list is not None and cycles[0] and _single(found[0]):
        raise UsageError(f"{face.name('rank_list')} selects ranks; the base {term_safe(base)} and the comparison "
                         f"{term_safe(comparison)} hold a single device's cycles (no rank ids): leave it out")
    sides = [{unit_rank(u): p for u, p in side.items() if not isinstance(u, RankCycle) or u.cycle == 1}
             for side in found]
    listed = set(rank_list) if rank_list is not None else set(sides[0]) | set(sides[1])
    common = sorted(set(sides[0]) & set(sides[1]) & listed)
    if not common:
        chosen = ""
        if rank_list is not None:  # the list as each face takes it: [5, 9] in Python, '5,9' on the command line
            chosen = f" of {face.given('rank_list', list(rank_list) if face.api else ','.join(map(str, rank_list)))}"
        raise ProfileError(None, f"no rank{chosen} in common: the base {term_safe(base)} holds "
                                 f"{named_units(sides[0])}, the comparison {term_safe(comparison)} holds "
                                 f"{named_units(sides[1])}")
    for (name, folder, own), other in zip((("base", base, sides[0]), ("comparison", comparison, sides[1])),
                                          (sides[1], sides[0]), strict=True):
        alone = [r for r in own if r not in other and r in listed]
        if alone:
            log.warning("%s only in the %s %s, not compared: %s", "Rank" if len(alone) == 1 else "Ranks", name,
                        term_safe(folder), ", ".join(map(str, alone)))
    absent = sorted(listed - set(sides[0]) - set(sides[1]))
    if absent:
        log.warning("%s of %s in neither the base %s nor the comparison %s, not compared: %s",
                    "Rank" if len(absent) == 1 else "Ranks", face.name("rank_list"), term_safe(base),
                    term_safe(comparison), ", ".join(map(str, absent)))
    not_compared = sorted((set(sides[0]) ^ set(sides[1]) | set(absent)) & listed)
    if not cycles[0]:
        pairs = {r: (sides[0][r], sides[1][r]) for r in common}
        _read_comm_keywords(opts, pairs, heads)
        return pairs, {r: (sides[0].get(r), sides[1].get(r)) for r in not_compared}
    both = min(cycles)
    for name, folder, n in (("base", base, cycles[0]), ("comparison", comparison, cycles[1])):
        if n > both:
            log.warning("%s only in the %s %s (%s cycles against %s), not compared: %s",
                        "Cycle" if n - both == 1 else "Cycles", name, term_safe(folder), f"{n:,}", f"{both:,}",
                        ", ".join(map(str, range(both + 1, n + 1))))
    kept = set(common) | set(not_compared)
    units = {RankCycle(r, k): (found[0].get(RankCycle(r, k)), found[1].get(RankCycle(r, k)))
             for k in range(1, max(cycles) + 1) for r in sorted(kept, key=lambda r: -1 if r is None else r)}
    pairs = {u: paths for u, paths in units.items() if None not in paths}
    # a rank one folder lacks: its cycles the other holds; a listed rank neither holds: as many as the longer side
    alone = {u: paths for u, paths in units.items() if u not in pairs and (paths != (None, None) or u.rank in absent)}
    _read_comm_keywords(opts, pairs, heads)  # type: ignore[arg-type]
    return pairs, alone  # type: ignore[return-value]


def _read_comm_keywords(opts: Options, pairs: dict[Unit, tuple[str, str]], heads: TraceHeads) -> None:
    """Read the keyword lists once for the job where a rank's CommunicationCompare will (a Kineto side's collective
    kernels go by them) and the time breakdown has not read them already (``rank_pairs``): a bad
    MSPROF_COMPARE_CONFIG file was named by rank 0's compare, "rank 0: ...", as if that rank's data were at fault,
    after the ranks before the first Kineto one were compared. The sides are told by their first bytes, as a single
    compare tells them (``_is_kineto``), up to the first Kineto one."""
    if not opts.time_breakdown and _reads_keywords(
            opts, (_layout(p, opts.force, heads) for paths in pairs.values() for p in paths), heads):
        classify.load_keywords()


def _reads_keywords(opts: Options, layouts: Iterable[Layout | None], heads: TraceHeads) -> bool:
    """Whether a compare reads the keyword lists: the time breakdown does, and so does a Kineto side's
    CommunicationCompare (its collective kernels go by them). One predicate for a compare and a job's ranks
    (``_read_comm_keywords``); ``layouts`` (``_layout``) are taken lazily, up to the first Kineto one."""
    return bool(opts.time_breakdown or (opts.enable_communication_compare and
                                        any(_is_kineto(lay, heads) for lay in layouts)))


def _cycles(units: dict[Unit, str]) -> int:
    """How many cycles a folder's discovery holds per rank: 0 where it holds one profile per rank (no cycles)."""
    return max((u.cycle for u in units if isinstance(u, RankCycle)), default=0)


def _single(units: dict[Unit, str]) -> bool:
    """Whether a folder's discovery is a single device's cycles (no rank ids)."""
    return any(isinstance(u, RankCycle) and u.rank is None for u in units)


def _refuse_cycles(folders: tuple[str, str], found: tuple[dict[Unit, str], ...], cycles: list[int]) -> None:
    """Cycles are paired only where both folders hold a profiler schedule's cycles (of ranks, or of a single device
    on both sides): against a folder of one profile per rank, which cycle to compare is the user's to choose."""
    def held(side: int) -> str:
        if not cycles[side]:
            return "one profile per rank"
        return f"{cycles[side]} cycles " + ("of a single device" if _single(found[side]) else "per rank")

    side = 0 if cycles[0] else 1
    raise ProfileError(folders[side], f"holds {held(side)} (a profiler schedule's), but the "
                                      f"{('comparison', 'base')[side]} {term_safe(folders[1 - side])} holds "
                                      f"{held(1 - side)}",
                       hint="cycles compare cycle by cycle only against a folder of cycles of the same kind: pass "
                            "one cycle's folder (split by the timestamps in the names), or both folders of cycles")


def rank_results(pairs: dict[Unit, tuple[str, str]], options: dict[str, Any], face: Face,
                 notices: RankNotices | None = None,
                 heads: TraceHeads | None = None) -> Generator[tuple[Unit, CompareResult], None, None]:
    """The rank-by-rank results, one at a time: the previous result's cycles are collected before a rank loads,
    and a line names the rank's two inputs before its compare (the CLI's and ``compare_ranks``': a notebook's log
    named no rank's inputs). Each compare logs through ``notices`` (a new
    ``RankNotices`` when None: one per call, the state of no other), installed for that compare alone, never
    across a ``yield``: its lines begin with ``rank N: `` (``rank N cycle k: ``, ``cycle k: ``) and an earlier
    unit's notices it repeats are left out. ``heads``: discovery's trace heads (``rank_pairs``), which detection
    reads no file's again from.
    The line counting those is logged once every rank is compared; a caller that stops early (``break``,
    ``close()``) or a rank's error ends the iteration without it, as the CLI's run that stops at a rank."""
    from .loaders.pair import parallel_mode

    if notices is None:
        notices = RankNotices(list(pairs.values()))
    transparent: tuple[set[str], set[str]] = (set(), set())  # --transparent_op names checked, and found in a rank
    # the job's MSPROF_COMPARE_PARALLEL, read once (a bad value warned of in the job's words): every rank's load read
    # it, and the warning read as rank 0's ("rank 0: Ignoring ..."), the later ranks' counted among the left-out
    parallel = parallel_mode()
    for rank, (base, comparison) in pairs.items():
        gc.collect()
        log.info("%s: comparing %s with %s", unit_label(rank), base, comparison)
        try:
            with notices.of_rank(rank), said_once():
                result = _compare(base, comparison, options, face, heads, unit_rank(rank), transparent, parallel)
        except (ProfileError, UsageError, MemoryError) as exc:
            _rank_error(exc, rank, (base, comparison))
            raise
        yield rank, result
        del result
    notices.say_left_out(face.api)
    _refuse_transparent_in_no_rank(transparent, list(pairs), face)


def _refuse_transparent_in_no_rank(transparent: tuple[set[str], set[str]], units: list[Unit], face: Face) -> None:
    """A ``--transparent_op`` name no rank's ops have (``RunContext.ranks_transparent``) is refused once every rank is
    compared, each rank having warned of it: the single compare's error, in the job's words. The reports stay,
    those of runs without it (the CLI says so)."""
    never = sorted(transparent[0] - transparent[1])
    if not never:
        return
    what = " and ".join(f"transparent_op={n!r}" if face.api else f"--transparent_op {shell_word(n)}" for n in never)
    noun = unit_noun(units[0]) if units else "rank"
    raise ProfileError(None, f"{term_safe(what)} {'names' if len(never) == 1 else 'name'} no operator of either side "
                       f"in any {noun} compared ({len(units):,}), so {'it opens' if len(never) == 1 else 'they open'} "
                       f"nothing", hint=f"the op's whole name, case-sensitive, as a {noun} report's Operator Name "
                       "gives it")


def _rank_error(exc: ProfileError | UsageError | MemoryError, rank: Unit, inputs: tuple[str, str]) -> None:
    """``exc`` names its rank first: ``rank 1: <path>: <message>`` (``.rank`` holds it for the CLI, and
    ``.rank_inputs`` the rank's pair, whose sizes the CLI's out-of-memory advice counts). Not a ``ConfigError``,
    the job's: a bad keyword file a rank's compare read (a GPU rank whose other side has no torch op reads it for
    the comparisons it names) read "rank 0: <file>: ...", as if that rank's data were at fault."""
    if isinstance(exc, ConfigError):
        return
    exc.rank = rank  # type: ignore[union-attr]
    exc.rank_inputs = inputs  # type: ignore[union-attr]
    if isinstance(exc, ProfileError):
        exc.args = (str(exc),)
    elif exc.args and isinstance(exc.args[0], str):
        exc.args = (f"{unit_label(rank)}: {exc.args[0]}", *exc.args[1:])


def _compare(base: str | os.PathLike[str], comparison: str | os.PathLike[str],
             options: dict[str, Any], face: Face, heads: TraceHeads | None = None,
             rank: int | None = None,
             ranks_transparent: tuple[set[str], set[str]] | None = None,
             parallel: str | None = None) -> CompareResult:
    """``compare`` as ``face`` takes it; ``rank``: the one discovery read for both inputs (``rank_results``), which
    a DB export's META_DATA is checked against once loaded (``loaders.ranks.check_db_rank``);
    ``ranks_transparent``: that run's ``RunContext.ranks_transparent``; ``parallel``: the job's
    ``MSPROF_COMPARE_PARALLEL`` (``loaders.pair.parallel_mode``; None: the compare reads it)."""
    base, comparison = _path("base", base), _path("comparison", comparison)
    heads = TraceHeads() if heads is None else heads  # a trace's head, read once by the checks and detection
    opts, warnings = checked_options(options, face)
    for w in warnings:
        log.warning(w)
    for role, path, flag, place in (("base", base, "-bp", "first"), ("comparison", comparison, "-d", "second")):
        if not path:  # the original's sentence names no side: which of the two paths (``-bp ""``, ``-d "$UNSET"``)
            raise ProfileError(None, "The path is empty. Please enter a valid path.",
                               hint=f"the {role} path: the {place} argument of compare()" if face.api
                               else f"the {role} path: {flag}, or the {place} path of performance_compare.py")
    # a size-cap variable that is no byte count is the run's, no input's: checked before a side's load, which named
    # it "(base side: ...)" (README, the exit-1 row: a file of neither input gets its hint alone)
    check_size_caps(opts.force)
    _refuse_rank_folders(base, comparison, face, opts.force, heads)
    retype = _typed_words(base, comparison, face)
    with paths_as_typed(retype, api=face.api):
        try:
            return _compare_inputs(base, comparison, opts, heads, rank, ranks_transparent, parallel)
        except (ProfileError, UsageError, OutOfMemory) as exc:
            if face.api and isinstance(exc, ProfileError) and exc.api_text is not None:
                exc.message, exc.hint = exc.api_text
            _retype(exc, retype)
            raise


def _sides(base: str, comparison: str) -> tuple[str, str]:
    """How a line about each input names its side: "both sides" for one path given twice, whose lines are one
    text, said once (``logs.said_once``)."""
    return ("both sides", "both sides") if base == comparison else ("base side", "comparison side")


def _typed_words(base: str, comparison: str, face: Face) -> Callable[[str], str]:
    """How an error of the pair ``base`` / ``comparison`` is worded: the inputs' paths as typed, the options as
    ``face`` takes them (a path's own words that look like a flag kept). One rule for the compare's errors and the
    rank-folder refusal made before it, which wrote it out twice."""
    typed = TypedPaths(base, comparison)
    kept = flag_words_kept(*(p for given in (base, comparison) for p in (given, given.lstrip("="), given_path(given))))
    return lambda text: face.words(typed.text(text), kept)


def _refuse_rank_folders(base: str, comparison: str, face: Face, force: bool,
                         heads: TraceHeads | None = None) -> None:
    """A folder of ranks (``rank0_ascend_pt``, ...) is one input of a rank-by-rank compare only: against one profile
    it is refused, saying what to pass (the loader's "not collected" error named neither the other side nor the
    rank-by-rank compare)."""
    from .loaders.ranks import NoRanks, discover, rank_inputs

    heads = TraceHeads() if heads is None else heads

    def of_ranks(given: str, side: str) -> str:  # a folder of traces or profiling directories that record no rank
        if not rank_inputs(given_path(given), heads):  # (one process's runs) keeps the loader's "holds N traces" error
            return ""
        try:
            found = discover(given_path(given), force, heads, side)
        except NoRanks:
            return ""
        return "cycles" if _single(found) else "ranks"

    try:
        kinds = []
        for given, side in zip((base, comparison), _sides(base, comparison), strict=True):
            with on_side(side):
                kinds.append(of_ranks(given, side))
    except ProfileError as exc:
        # a folder of ranks that discovery refuses (rank 1's trace recording no rank, rank 0 held twice): its error,
        # where the folder was read as its one top trace (rank 0's, compared alone: the other ranks left out without
        # a word) or given the loader's "holds 2 JSON traces (pass the trace file itself)"; named as typed
        _retype(exc, _typed_words(base, comparison, face))
        raise
    if kinds == ["cycles", "cycles"]:  # the loader's error told to pass "one rank per side", not compare_ranks
        raise ProfileError(base, "is a folder of a single device's cycles, and so is the comparison",
                           hint="compare_ranks() compares them cycle by cycle; or pass one profile per side")
    # a single device's cycles beside one profile: said so, where the loader's error read "holds 2 traces (pass the
    # trace file itself)" or "pass one of them, one rank per side" (a folder of ranks beside cycles: the loader's)
    cycles = sorted(kinds) == ["", "cycles"]
    folders = [kind == ("cycles" if cycles else "ranks") for kind in kinds]
    if not any(folders):
        return
    if all(folders):  # compare() of two folders of ranks; the CLI compares them rank by rank before getting here
        raise ProfileError(base, "is a folder of ranks, and so is the comparison",
                           hint="compare_ranks() compares them rank by rank; or pass one rank per side")
    folder, role, other = (base, "comparison", comparison) if folders[0] else (comparison, "base", base)
    # the other side's own error first (a mistyped path: the loader, reading the base first, named only the folder)
    with on_side(f"{role} side"):
        layout = detect(other, force, heads)
    what = "one profile"
    if os.path.isdir(given_path(other)) and layout.level == "file":  # a folder of one readable trace: which one
        what += f", the trace {term_safe(os.path.basename(layout.trace_path))} alone"  # (a rank's may be corrupt)
    first = (rank_inputs(given_path(folder), heads) or [given_path(folder)])[0]  # a subfolder's cycle: a level down
    example = term_safe(os.path.join(folder, os.path.relpath(first, given_path(folder))))
    unit, by, one = ("a single device's cycles", "cycle", "one profile") if cycles else ("ranks", "rank", "one rank")
    way = (f"compare_ranks() compares two folders of {unit} {by} by {by}" if face.api
           else f"pass a folder of {unit} on both sides (-bp and -d, or both paths of performance_compare.py) to "
                f"compare {by} by {by}")
    raise ProfileError(folder, f"is a folder of {unit}, but the {role} {term_safe(other)} is {what}",
                       hint=f"{way}, or {one} per side, such as {example}")


@contextlib.contextmanager
def _api_words(target: object) -> Iterator[None]:
    """For a result's ``to_excel`` / ``to_json``: an error or warning names the options as ``compare()`` takes
    them ("or --force" of a shared output folder reads "or force=True"), for this thread's records only; the
    ``target`` path keeps its name."""
    try:
        output = os.fsdecode(target)  # type: ignore[arg-type]
    except TypeError:  # refused by the writer, which names it
        output = ""
    kept = flag_words_kept(output, os.path.abspath(output)) if output else ()

    def words(text: str) -> str:
        return API_FACE.words(text, kept)

    with paths_as_typed(words, api=True):
        try:
            yield
        except (ProfileError, UsageError, OutOfMemory) as exc:
            _retype(exc, words)
            raise


def _retype(exc: ProfileError | UsageError | OutOfMemory, retype: Callable[[str], str]) -> None:
    """An error's paths named as the user typed the inputs (``TypedPaths``): the loaders name the files they
    read by their absolute paths, and "no such file" names the path as typed; now every message names it one way,
    which the user can copy back into the command line."""
    if isinstance(exc, ProfileError):
        exc.path = retype(exc.path) if exc.path else exc.path
        exc.message = retype(exc.message)
        exc.hint = retype(exc.hint) if exc.hint else exc.hint
        exc.args = (str(exc),)
    elif isinstance(exc, OutOfMemory):
        exc.path = retype(exc.path)
        exc.args = (exc.said(),)
    else:
        exc.args = tuple(retype(a) if isinstance(a, str) else a for a in exc.args)


def _compare_inputs(base: str, comparison: str, opts: Options, heads: TraceHeads, rank: int | None = None,
                    ranks_transparent: tuple[set[str], set[str]] | None = None,
                    parallel: str | None = None) -> CompareResult:
    """Detect, load and compare two inputs (their paths checked as non-empty); a JSON file's head is read through
    ``heads``, once. ``rank``: both inputs' rank (``_compare``), checked on each loaded side."""
    from .loaders.pair import input_bytes, load_pair  # large inputs load side by side (two processes)
    from .loaders.ranks import check_db_rank

    def check(profile: Profile) -> None:
        _check_usable(profile)
        if rank is not None:
            check_db_rank(rank, profile, opts.force)

    # each side's layout (None: refused, the loader detects again and names the problem), detected once
    layouts = [_layout(p, opts.force, heads) for p in (base, comparison)]
    # one input under two paths (run/ and ./run) is on both sides; a link and the file it leads to are not: a
    # refused link is the side it was given as
    one = one_input(base, comparison, opts)
    if opts.step_given:
        _refuse_gpu_step(layouts, heads, ("both sides",) * 2 if one else ("base side", "comparison side"))
    keywords = None
    # the breakdown and a Kineto side's CommunicationCompare (its collective kernels) read the keyword lists
    if _reads_keywords(opts, layouts, heads):
        from .compare.classify import load_keywords

        keywords = load_keywords()  # a bad MSPROF_COMPARE_CONFIG file is named before minutes of loading
    size = sum(input_bytes(p, lay, opts) for p, lay in zip((base, comparison), layouts, strict=True))
    # loading a GB takes tens of seconds: say what is happening, unless an input is refused at once
    notice = size >= LOAD_NOTICE_BYTES and all(layouts)
    if notice:
        log.info("Loading %s MB of profiling data, please wait.", f"{size / 1e6:,.0f}")
    started = time.perf_counter()
    base_profile, comparison_profile = load_pair(base, comparison, load_profile, (opts, opts.base_step, layouts[0]),
                                                 (opts, opts.comparison_step, layouts[1]), check, size,
                                                 "both sides" if one else "base side", parallel)
    if notice:
        log.info("Profiling data loaded in %.1f s.", time.perf_counter() - started)
    # after loading: an input the loader refuses (a symbolic link without --force) gets its error alone
    same = ""
    if opts.base_step == opts.comparison_step:
        same = _same_input(base, comparison, layouts) or _same_events(base_profile, comparison_profile)
    if same:
        log.warning("%s", same)
    if opts.gpu_flow_cat and not (base_profile.is_gpu or comparison_profile.is_gpu):
        ignored = ("{} is ignored: it names the flow category of GPU traces, and both inputs are NPU data (their ops "
                   "and kernels are linked by the profiler's own flows).")
        # the value as each face takes it: the CLI's pasted into a shell, compare()'s as Python
        cat = opts.gpu_flow_cat
        said = ignored.format(f"--gpu_flow_cat {term_safe(shell_word(cat))}")
        log.warning("%s", said, **api_worded(said, ignored.format(f"gpu_flow_cat={term_safe(repr(cat))}")))
    matching = _matching_options_without_ops(opts, base_profile, comparison_profile)
    for line in matching:
        log.warning("%s", line)
    unused, unmatched, why = ([], [], "") if matching else _unused_name_map_keys(opts, (base_profile,
                                                                                       comparison_profile))
    if unused or unmatched:
        from .compare.modules import has_modules
        from .compare.optree import names_sheet  # said before pairing: "OperatorCompare or ModuleCompare" may be

        # a side without nn.Module events pairs no module: the run writes the operator sheets alone
        paired = None if has_modules(base_profile) and has_modules(comparison_profile) else (lambda: False)
        hint = f"names are case-sensitive: copy them from the {names_sheet(opts, paired)} sheet"
    if unused:
        one = len(unused) == 1
        log.warning("--op_name_map: %s %s no operator of either side and %s in no module name, so %s nothing (%s).",
                    ", ".join(term_safe(repr(k)) for k in unused), "names" if one else "name",
                    "appears" if one else "appear", "it renames" if one else "they rename", hint)
    if unmatched:
        one = len(unmatched) == 1
        # the module names read: the keys are in them (no misspelling to hint at) unless no loader read them
        read = opts.enable_operator_compare and not opts.disable_module
        log.warning("--op_name_map: %s %s no operator of either side and could rename only module paths, which this "
                    "run does not compare (%s), so %s nothing%s.", ", ".join(term_safe(repr(k)) for k in unmatched),
                    "names" if one else "name", why, "it renames" if one else "they rename",
                    "" if read else f" ({hint})")
    crossed = [] if matching else _renamed_again(opts)
    if crossed:
        said = [tuple(term_safe(repr(x)) for x in t) for t in crossed[:3]]
        log.warning("--op_name_map renames once, on both sides: %s%s; give one entry per pair of names.", "; ".join(
            f"{k} becomes {v} and {v} becomes {w}, so an op named {k} on one side and {v} on the other still differ"
            for k, v, w in said), f" ({len(crossed)} in all)" if len(crossed) > 3 else "")
    return run_comparators(base_profile, comparison_profile, opts, keywords, same, ranks_transparent)


def _matching_options_without_ops(opts: Options, base: Profile, comparison: Profile) -> list[str]:
    """One line per option of operator matching given (``--op_name_map``, ``--use_input_shape``,
    ``--max_kernel_num``, ``--transparent_op``) where a side has no torch op to pair (a MindSpore export), in the
    words of the options no comparison reads (``options._unread_options``): the operator and memory sheets are
    then left out, and a GPU user's map of aten names to MindSpore names was taken without a word. Nothing under
    --disable_details or without those comparisons, where the options are said to be ignored already."""
    from .compare.optree import no_ops_reason

    given = [name for name, on in (("max_kernel_num", opts.max_kernel_num is not None),
                                   ("use_input_shape", opts.use_input_shape), ("op_name_map", bool(opts.op_name_map)),
                                   ("transparent_op", bool(opts.transparent_op))) if on]
    if not given or opts.disable_details or not (opts.enable_operator_compare or opts.enable_memory_compare):
        return []
    paired = pair_has_ops(base, comparison)
    if all(paired):
        return []
    bare = [(side, p) for side, p, ok in (("base", base, paired[0]), ("comparison", comparison, paired[1]))
            if not ok]
    if len(bare) == 1:
        why = f"the {bare[0][0]} side has no torch op ({no_ops_reason(bare[0][1])})"
    else:
        reasons = list(dict.fromkeys(no_ops_reason(p) for _, p in bare))
        why = "neither side has a torch op (" + (
            reasons[0] if len(reasons) == 1 else f"base: {reasons[0]}; comparison: {reasons[1]}") + ")"
    return [f"The {name} parameter is ignored: it only takes effect when operators are matched, and {why}."
            for name in given]


def _unused_name_map_keys(opts: Options, profiles: tuple[Profile, Profile]) -> tuple[list[str], list[str], str]:
    """The ``--op_name_map`` keys that rename nothing in a run that compares operators: the key is no op's whole
    name on either side (ops are renamed by whole name), no part of an nn.Module python_function or optimizer op
    name (module paths, made of those, are renamed by substring; a call-stack frame's name is in none), no part of
    the ``[ BACKWARD ]`` that begins a backward module's path where a side may have one, and holds no "/" (which
    could span two levels of a module path). A misspelt key otherwise passes without a word, and the
    user reads the unchanged match rate as the map not helping; a key that is only part of an op's name
    (``aten::relu`` for ``aten::relu_``, or ``linear`` of the frame ``<built-in function linear>``) renames no op
    either. Second, the other keys that name no op in a run that compares no modules (every one where no loader read
    the module names: without the operator comparison or under --disable_module), with why (third): they could
    rename module paths alone, which such a run does not match, and were said nowhere. No key under
    --disable_details: the map is said to be ignored there (no op or module is matched), and advice to copy names
    from the detail sheets that run hides only misled."""
    if not opts.op_name_map or opts.disable_details or not (opts.enable_operator_compare or
                                                            opts.enable_memory_compare):
        return [], [], ""
    from .compare.modules import BACKWARD, backward_modules_possible, has_modules, module_event_names

    ops: set[str] = set()
    parts: set[str] = set()  # names a module path is made of, renamed by substring
    for p in profiles:
        ops.update(str(n) for n in pd.unique(p.ops["name"]).tolist())
        parts.update(module_event_names(p))
        if backward_modules_possible(p):
            parts.add(BACKWARD)
    parts.update(n for n in ops if n.lower().startswith("optimizer"))  # the module trees' optimizer test
    # the module matching runs within the operator comparison, on two sides with nn.Module events
    without = [side for side, p in zip(("base", "comparison"), profiles, strict=True) if not has_modules(p)]
    why = ("only --enable_operator_compare compares them" if not opts.enable_operator_compare
           else "--disable_module" if opts.disable_module
           else "neither side has nn.Module events" if len(without) == 2
           else f"the {without[0]} side has no nn.Module events" if without else "")
    named = [k for k in opts.op_name_map if k and k not in ops]
    if why and not (opts.enable_operator_compare and not opts.disable_module):  # no loader read the module names
        return [], named, why
    unused = [k for k in named if "/" not in k and not any(k in n for n in parts)]
    return unused, [k for k in named if k not in unused] if why else [], why


def _renamed_again(opts: Options) -> list[tuple[str, str, str]]:
    """(a, b, c) per ``--op_name_map`` entry a -> b whose b is itself renamed (b -> c, c != b): the map applies
    once, to both sides' names (reference-2 §0.4), so an op named a on one side and b on the other become b and c
    and do not pair. A two-way map written to say "these are equivalent" ({a: b, b: a}) swaps the names and pairs
    nothing, without a word (the match rate stays as it was); a swap is named once. Empty under --disable_details,
    where the map is said to be ignored, and without the operator and memory comparisons, which alone apply it."""
    m = opts.op_name_map
    if not m or opts.disable_details or not (opts.enable_operator_compare or opts.enable_memory_compare):
        return []
    out: list[tuple[str, str, str]] = []
    for k, v in m.items():
        if k != v and v in m and m[v] != v and not (m[v] == k and (v, k, v) in out):
            out.append((k, v, m[v]))
    return out


def _same_input(base: str, comparison: str, layouts: list[Layout | None]) -> str:
    """The warning for two inputs that read one profile's data, so that every difference is zero ("" for any other
    pair): both paths lead to one file or folder (a mistyped command line), or a ``*_ascend_pt`` folder on one side
    and its ASCEND_PROFILER_OUTPUT on the other (``layouts``: each side's, None where the loader refuses it), paths
    that differ. A bare trace_view.json beside its folder is no such case: the folder's side reads the CSVs too, so
    its figures differ. Comparing two steps of one profile is intended, so the caller asks only for equal steps."""
    read = given_path(base)  # the base path as the loader reads it
    if _same_file(read, given_path(comparison)):
        return f"Base and comparison are the same input ({display(read)}): every difference will be zero."
    if None in layouts or {lay.level for lay in layouts} != {"profiling", "ascend_output"} \
            or not _same_file(layouts[0].ascend_output, layouts[1].ascend_output):
        return ""
    out, folder = (base, comparison) if layouts[0].level == "ascend_output" else (comparison, base)
    return (f"Base and comparison read the same export ({display(out)} is the output folder of {display(folder)}): "
            "every difference will be zero.")


#: The note for two loaded profiles whose every table is equal (``_same_events``).
SAME_EVENTS = "Base and comparison hold the same events (copies of one profile?): every difference will be zero."
#: The note for two whose tables hold the same rows, some in another order (``_same_events``).
SAME_EVENTS_REORDERED = ("Base and comparison hold the same events in another order (copies of one profile, written "
                         "again?): every difference will be zero but where file order counts (ops that start "
                         "together nest in it, Kernel Details cells list kernels in it).")


def _same_events(base: Profile, comparison: Profile) -> str:
    """The warning for two loaded profiles whose every table is equal ("" for any other pair): a copy of the base
    under another name (or another folder) compared at zero without a word, where the same path was warned about.
    Decided from the loaded tables, not by reading the files again: two runs differ in some table's length nearly
    always, which is looked at first at no cost; equal lengths compare the values (vectorised). Equal tables are
    the same events, not necessarily the same bytes (a trace and its gzip copy, or one written again with its keys
    in another order, other blanks, ``1.50`` for ``1.5``: the loaders read those alike), so the words say that.
    The loaders keep file order, so a copy whose events (or CSV rows) were written in another order has the same
    rows in other places: ``_same_rows`` tells it, and the note says a difference can come from that order (the
    op tree nests ops starting together in file order, reference-2 §2.2). Two ranks of one job hold tables of
    equal lengths (msinsight's level-1 ranks 0 and 1, text and DB: every table); compared whole they cost the
    names' object comparisons (10.8 ms for xdit's 200,000 events a pair of ranks), so a table whose integer
    timestamps differ goes straight to ``_same_sums``, which tells them apart at the cost of a sum."""
    if (base.kind, base.source, base.level) != (comparison.kind, comparison.source, comparison.level):
        return ""
    pairs = [(getattr(base, name), getattr(comparison, name)) for name in PROFILE_FRAMES]
    if any((b is None) != (c is None) or (b is not None and b.shape != c.shape) for b, c in pairs):
        return ""
    if not any(b is not None and len(b) for b, _ in pairs):  # two files that loaded no row are not one profile's
        return ""
    try:
        moved = []
        for b, c in pairs:  # a table of other values ends it (two runs' times differ in every order: ``_same_sums``)
            if b is None:
                continue
            moved_ts = "ts" in b and ("ts" not in c or not np.array_equal(b["ts"].to_numpy(), c["ts"].to_numpy()))
            if not moved_ts and b.equals(c):
                continue
            if not _same_sums(b, c):
                return ""
            moved.append((b, c))
        if moved and not all(_same_rows(b, c) for b, c in moved):
            return ""
        # after the tables, which tell two runs apart at the cost of a sum: what else the loader read
        if not all(_same_value(getattr(base, name), getattr(comparison, name), bool(moved)) for name in _READ_FIELDS):
            return ""
    except (TypeError, ValueError):  # a cell pandas cannot compare or hash: two profiles as far as this note goes
        return ""
    return SAME_EVENTS_REORDERED if moved else SAME_EVENTS


#: The ``Profile`` fields besides its tables that hold what a loader read (communication.json, the metadata,
#: ``extra``: a DB export's PMU figures, which set the Cube / Vector split, live there), compared by
#: ``_same_events``: a copy whose TASK_PMU_INFO moved a kernel to Cube was called "every difference will be zero"
#: beside a Conv (Forward) (Cube) +0.05 ms. Its path, the files it read and its load warnings (which name them)
#: differ between copies; kind, source and level are compared first.
_READ_FIELDS = tuple(f.name for f in dataclasses.fields(Profile) if f.name not in PROFILE_FRAMES
                     and f.name not in ("path", "files", "warnings", "kind", "source", "level"))


def _same_value(a: Any, b: Any, any_order: bool = False) -> bool:
    """Equality of two values a loader read, NaN equal to NaN: a copy's NaN is another float and ``nan != nan``,
    so a communication.json holding one never equalled its copy's (no note for copies of it). Tables inside
    compare as tables; ``any_order``: the profile's tables hold their rows in another order (a copy written
    again), so those read beside them may too. Unequal types are two values (this can miss a copy, never call two
    profiles one)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, pd.DataFrame):
        if a.shape != b.shape or not a.columns.equals(b.columns):
            return False
        return a.equals(b) or (any_order and _same_sums(a, b) and _same_rows(a, b))
    if isinstance(a, pd.Series | pd.Index):
        return a.dtype == b.dtype and a.equals(b)
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind != "O":
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        return _same_value(a.tolist(), b.tolist(), any_order)
    with contextlib.suppress(TypeError, ValueError):  # a table or array inside: walked below
        if a == b:  # the common case, at C speed
            return True
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k], any_order) for k in a)
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return False
        if all(map(_same_value, a, b, [any_order] * len(a))):
            return True
        # in another order: a copy written again lists its names in its own order (a scalar's repr is exact; a
        # table's is cut short, so other items are two values)
        scalars = all(isinstance(x, str | int | float) for x in (*a, *b))
        return any_order and scalars and sorted(map(repr, a)) == sorted(map(repr, b))
    if isinstance(a, float | np.floating):
        return bool(np.isnan(a) and np.isnan(b))
    return False


def _numbers(frame: pd.DataFrame) -> list[np.ndarray]:
    """The numeric columns of ``frame``, a float column as its bit patterns (exact, and equal NaNs alike)."""
    out = []
    for col in frame.columns:
        x = frame[col].to_numpy()
        if x.dtype.kind in "iufb":
            out.append(x.view(f"i{x.dtype.itemsize}") if x.dtype.kind == "f" else x)
    return out


def _same_sums(b: pd.DataFrame, c: pd.DataFrame) -> bool:
    """Whether two frames of one shape have the same columns and types and, per numeric column, the same sum
    (wrapping): the same rows in any order do, and two runs differ in their time columns, so a pair of different
    profiles of equal table lengths is told apart by one pass over its numbers, before any row is sorted."""
    if list(b.columns) != list(c.columns) or not b.dtypes.equals(c.dtypes):
        return False
    return all(x.sum(dtype=np.int64) == y.sum(dtype=np.int64)
               for x, y in zip(_numbers(b), _numbers(c), strict=True))


def _same_rows(b: pd.DataFrame, c: pd.DataFrame) -> bool:
    """Whether two frames (``_same_sums``) hold the same rows, in any order: each sorted by its numeric columns
    and compared whole; where rows tie in every number and their text keeps another order, by a hash of each
    row (a hash collision can only miss a copy, never call two profiles one)."""
    def by(frame: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
        return frame.take(order).reset_index(drop=True)

    nb, nc = _numbers(b), _numbers(c)
    if nb and by(b, np.lexsort(nb[::-1])).equals(by(c, np.lexsort(nc[::-1]))):
        return True
    hb = pd.util.hash_pandas_object(b, index=False).to_numpy()
    hc = pd.util.hash_pandas_object(c, index=False).to_numpy()
    if not np.array_equal(np.sort(hb), np.sort(hc)):
        return False
    return by(b, np.argsort(hb, kind="stable")).equals(by(c, np.argsort(hc, kind="stable")))


def _same_file(a: str, b: str) -> bool:
    """``os.path.samefile``, False where a path is missing or unusable (the loader names it, or named it already)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def one_input(base: str, comparison: str, opts: Options) -> bool:
    """Whether a run's two sides are one input at one step: one path, or one directory entry under two (``run`` and
    ``run/``), as the loaders' notes name it "(both sides)"; the step refusals and the gate's refusal ask here."""
    if opts.base_step != opts.comparison_step:
        return False
    return base == comparison or _same_entry(given_path(base), given_path(comparison))


def _same_entry(a: str, b: str) -> bool:
    """One directory entry under two paths: ``os.path.samefile`` without following a last symbolic link, so a link
    and its target stay two inputs. False where a path is missing or unusable."""
    try:
        first, second = os.lstat(a), os.lstat(b)
    except (OSError, ValueError):
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _layout(given: str, force: bool, heads: TraceHeads) -> Layout | None:
    """The input's layout as the loader will find it, before loading; None for a path the loader will refuse
    (its error comes from the loader, in the sides' order)."""
    try:
        return detect(given, force, heads)
    except ProfileError:
        return None


def _is_kineto(layout: Layout | None, heads: TraceHeads) -> bool | None:
    """Is the input of ``layout`` (``_layout``) a Kineto trace: known from its first bytes (a JSON object,
    reference-1 §2.1) without loading it; None for a path the loader will refuse (no layout)."""
    if layout is None:
        return None
    return layout.level == "file" and not layout.db_path and heads.of(layout.trace_path).first == "{"


def _refuse_gpu_step(layouts: list[Layout | None], heads: TraceHeads, sides: tuple[str, str]) -> None:
    """The GPU step refusal (reference-1 §1.4) before the inputs are read: loading two Kineto traces only to
    refuse the options took seconds per 100 MB. Sides are looked at in loading order; a path the loader would
    refuse ends the look, so its error still comes first (a missing comparison path after a Kineto base with a
    step is the one exception: the step refusal comes first). The refusal names the side (``sides``)."""
    from .compare import steps

    for layout, side in zip(layouts, sides, strict=True):
        kineto = _is_kineto(layout, heads)
        if kineto is None:
            return
        if kineto:
            raise steps.gpu_step_error(layout.given, side)  # type: ignore[union-attr]


def _check_usable(profile: Profile) -> None:
    """A trace without any device activity (a CPU-only capture) cannot be compared: say so instead of writing
    sheets where one side's device times are all 0 and read as a 100 % gain."""
    if profile.source == "kineto" and profile.kernels.empty:
        if profile.extra.get("range_profiler"):
            raise ProfileError(profile.files.get("trace", profile.path),
                               "no GPU kernel timeline in the trace: its GPU work is in 'cuda_profiler_range' "
                               "events, the per-kernel counters of the CUPTI range profiler",
                               hint="record it again without profiler_metrics in torch.profiler's "
                                    "_ExperimentalConfig for a kernel timeline")
        # a trace of an MTIA accelerator's events is refused by the loader, as soon as its kernels are read
        from .compare.breakdown_gpu import missing_kernels_hint

        raise ProfileError(profile.files.get("trace", profile.path),
                           "no GPU kernel, memcpy or memset events in the trace", hint=missing_kernels_hint(profile))
    # no device lane and no kernel_details.csv rows: a torch_npu capture without the NPU activity (it has torch
    # ops), or one recorded at profiler_level Level_none (MindSpore: LevelNone; such a capture may have no ops);
    # a legacy MindSpore timeline, which has neither ops nor a level, keeps the original's all-zero breakdown
    if profile.source != "ascend_text":
        return
    from .loaders.ascend_text import DEVICE_LANES

    kd = profile.kernel_details
    if not (profile.kernels.empty and profile.comm.empty and profile.overlap.empty and (kd is None or kd.empty)
            and not profile.processes["name"].isin(DEVICE_LANES).any()):
        return
    level = str(profile.extra.get("profiler_level") or "")
    level_none = level.replace("_", "").lower() == "levelnone"
    if profile.ops.empty and not level_none:
        return
    trace = profile.files.get("trace_view.json", profile.path)
    none = f"no NPU device lane ({', '.join(DEVICE_LANES[:-1])} or {DEVICE_LANES[-1]})"
    unnamed = profile.extra.get("unnamed_lane_events", 0)
    if unnamed:  # device events may be there, on lanes the trace does not name
        raise ProfileError(trace, f"{none} is named in the trace: {unnamed:,} complete event(s) lie on processes "
                                  "it gives no name (no process_name record, or an empty one)",
                           hint="the trace's process metadata is missing: pass the trace_view.json the "
                                "profiler wrote")
    if level_none:
        raise ProfileError(trace, f"{none} in the trace: it was recorded with profiler_level {level}, which "
                                  "records no device data",
                           hint="record it again with profiler_level Level0 or higher")
    raise ProfileError(trace, f"{none} in the trace", hint=_npu_activity_hint(profile, trace))


def _npu_activity_hint(profile: Profile, trace: str) -> str:
    """How to record the NPU activity, in the words of the framework that wrote ``trace``: a MindSpore 2.3 / 2.4
    export (framework ops of category cpu_op, so torch ops here) recorded without it was told to use torch_npu's
    profiler. MindSpore: a folder on the path named ``*_ascend_ms`` or a ``MindSpore`` process lane."""
    parts = os.path.normpath(os.path.abspath(trace)).split(os.sep)
    if any(part.endswith("_ascend_ms") for part in parts) or profile.processes["name"].eq("MindSpore").any():
        return "record it with mindspore.profiler.ProfilerActivity.NPU among the Profiler's activities"
    return "record it with torch_npu.profiler.ProfilerActivity.NPU"


def _check_steps(ctx: RunContext) -> None:
    """Refuse a step before any comparator runs, whichever comparisons are on (reference-1 §1.4,
    reference-2 §9): GPU data never has one, and the original validates a text step while reading the
    communication data, which it does for every comparison but kernel compare. That one checks its own
    rows (the ``Step Id`` column), so an id only the kernel table lacks is its own error."""
    from .compare import steps

    opts = ctx.options
    if not opts.step_given:
        return
    if ctx.base.is_gpu or ctx.comparison.is_gpu:
        gpu = ctx.base if ctx.base.is_gpu else ctx.comparison
        raise steps.gpu_step_error(gpu.path, ctx.side(gpu))
    if (opts.enable_profiling_compare or opts.enable_operator_compare or opts.enable_memory_compare
            or opts.enable_api_compare or opts.enable_communication_compare):
        steps.check_steps(ctx)


def _warn_without_kernels(profile: Profile) -> None:
    """One warning for a Kineto trace whose device events are memcpys / memsets only, in a run that compares
    operators without the time breakdown (whose error says it otherwise): its operators' device times hold its
    memcpys at most, so the operator and module sheets read every kernel's time on the other side as growth,
    silently. ``_check_usable`` already refused a trace with no device event at all."""
    if profile.source != "kineto" or profile.kernels.empty:
        return
    cats = col_of(profile.kernels, "task_type", object)
    if classify.per_unique(cats, lambda c: str(c).lower() == "kernel").any():
        return
    from .compare.breakdown_gpu import missing_kernels_hint

    log.warning("%s: no GPU kernels found in the trace, so its operators' device times in the operator and module "
                "sheets hold its memcpys at most (0 ms for every other operator): %s",
                profile.files.get("trace", profile.path), missing_kernels_hint(profile))


def run_comparators(base: Profile, comparison: Profile, opts: Options, keywords: Keywords | None = None,
                    same: str = "", ranks_transparent: tuple[set[str], set[str]] | None = None) -> CompareResult:
    """Run every enabled comparator on two loaded profiles (``keywords``: the breakdown's lists if read; ``same``:
    the warning that both sides are one profile, logged already, which the Summary's checks repeat;
    ``ranks_transparent``: ``RunContext.ranks_transparent``). The result holds them as given, or a copy named by
    ``display`` where a path is not UTF-8 text (``named_as``)."""
    typed = comparison.path
    # one input under two paths (-bp run -d ./run, an absolute and a relative one, or one through a link to a folder
    # above it) at one step: its notes and the comparators' lines are one line "(both sides)", said once
    one = one_input(base.path, typed, opts)
    alias = one and typed != base.path
    # the loaders' notes name files by absolute path, which differ where one path goes through a link (lnk/run and
    # run): the comparison's are read with the base's input path in place of its own
    own, base_own = (os.path.abspath(given_path(p)) for p in (typed, base.path))

    def text(w: object, side: str) -> str:
        return str(w).replace(own, base_own) if alias and side == "comparison" else str(w)

    sides = (("base", base), ("comparison", comparison))
    texts = {side: {text(w, side) for w in p.warnings} for side, p in sides}
    for (side, p), other in zip(sides, ("comparison", "base"), strict=True):
        for w in p.warnings:
            if not isinstance(w, SideNote):
                log.warning(w)
            elif text(w, side) not in texts[other]:
                log.warning(w.of_side(f"{side} side"))
            elif side == "base":  # one input on both sides: its note once, as its other notes are (``said_once``)
                log.warning(w.of_side("both sides"))
    # from here on a path is only shown: as text any report holds (``display``), which a loaded profile is not
    # renamed to (the run's own reading of the paths above lstat'ed the escaped text of a name that is not UTF-8,
    # and found no input twice)
    base, comparison = (p if display(p.path) == p.path else named_as(p, display(p.path)) for p in (base, comparison))
    ctx = RunContext(base, named_as(comparison, base.path) if alias else comparison, opts, keywords=keywords,
                     same=same, ranks_transparent=ranks_transparent)
    _check_steps(ctx)
    if opts.enable_operator_compare and not opts.enable_profiling_compare:
        for p in (ctx.base, ctx.comparison):
            _warn_without_kernels(p)
    log.info("Start to compare performance detail data, please wait.")
    sheets: list[Sheet] = []
    for _name, build in comparators(opts):
        for sheet in build(ctx):
            if len(sheet):
                sheets.append(sheet)
    # The Summary comparator reads the other sheets, so it runs last; its sheet goes first.
    from .compare import summary

    sheets[:0] = [s for s in summary.build(ctx, sheets) if len(s)]
    return CompareResult(base, comparison, applied_options(opts, base, comparison), sheets, ctx.summary, ctx.frames,
                         _one_input=one)


def named_as(profile: Profile, path: str) -> Profile:
    """``profile`` named otherwise without renaming it: by its path as text (``display``) for the comparators and
    the result, or, for the comparators, one input given twice under two paths (``run`` and ``./run``, a link to a
    folder above it) by the base's path, so that each of their lines about it is one text "(both sides)"
    (``RunContext.side``, ``logs.said_once``) where they said "(base side)" and "(comparison side)". A shallow copy:
    its tables are the loaded profile's own objects. The loaded profile was renamed instead, for the length of the
    run, so that a comparator reading its path for another reason, or a second run sharing it, read the base's."""
    return dataclasses.replace(profile, path=path)


def applied_options(opts: Options, base: Profile, comparison: Profile) -> Options:
    """The options as the run applied them, which the result keeps (``result.options``, the JSON report's
    ``options``): the kernel comparison, and ``use_kernel_type`` with it, off where a side is no NPU data. The
    kinds of the inputs rule it out before any data is read (KernelCompare reads Ascend's kernel tables; its
    notice says so), where every other comparison ran and may have found nothing (its option stays on, its
    notice says why it has no sheet): ``enable_kernel_compare`` read true on a GPU pair, the default run's
    included, as if the comparison had run and found no kernel. The flag itself is accepted as before."""
    if base.is_npu and comparison.is_npu or not (opts.enable_kernel_compare or opts.use_kernel_type):
        return opts
    return dataclasses.replace(opts, enable_kernel_compare=False, use_kernel_type=False)


def ranks_overview(results: Iterable[tuple[Unit, CompareResult]],
                   reports: Mapping[Unit, str | os.PathLike[str] | Sequence[str | os.PathLike[str]]] | None = None,
                   not_compared: Mapping[Unit, tuple[str | os.PathLike[str] | None, str | os.PathLike[str] | None]]
                   | None = None,
                   rank_list: str | int | Iterable[int] | None = None) -> dict[str, Any]:
    """The job overview of a rank-by-rank compare (the CLI's ``performance_comparison_result_ranks_*.json``) from
    ``(rank, CompareResult)`` pairs, ``compare_ranks``' iterator itself included: each result gives its small
    figures as it comes (``ranks_console.rank_figures``, the gate's verdict when compared with
    ``fail_on_regression``) and is dropped before the next rank loads. ``reports``: {rank: paths of the reports
    written}, read once every result is taken (a single path counts as one; a key that is no unit compared raises
    ``UsageError`` naming the compared ones). ``not_compared``: the ranks one folder
    alone holds (``compare_ranks``' ``.not_compared``, which ``results`` gives itself when it is that iterator); not
    known (``null`` in the document) otherwise. The job's folders are ``compare_ranks``' (its iterator given
    itself), else those holding each side's inputs. No pair, a
    rank given twice or both compared and not, or results compared with different ``fail_on_regression``
    thresholds (the overview judges its ranks by one), and anything but such pairs (``_rank_pairs``) raise
    ``UsageError``: results paired by hand can be any.
    ``rank_list``: the ranks selected, as ``compare_ranks`` takes it ("all", "0,3" or a sequence of ids; checked
    before a result is taken), which the document records (null: all) over the iterator's own ``.rank_list``; not
    given, the iterator's (null for other results). A rank compared or not compared that the list leaves out raises
    ``UsageError``: the document would say it was not selected. Units are rank ids, or ``RankCycle`` for
    folders of cycles (``compare_ranks``' own), not both (nor a single device's cycles beside cycles of ranks)."""
    from .report.ranks_console import rank_figures
    from .report.ranks_report import overview

    selected = getattr(results, "rank_list", None) if rank_list is None else parse_rank_list(rank_list, "rank_list")
    if isinstance(results, RankResults) and results.taken:
        # a notebook that looped over the iterator to read each verdict, then passed it here, was told "no (rank,
        # CompareResult) pair was given", and one that had peeked at a rank got a job without it, not said anywhere
        taken = results.taken
        raise UsageError(f"ranks_overview: this compare_ranks iterator has given {named_units(taken)} already "
                         f"({len(taken)} of its {len(results.units)}; it gives each once), so the overview would "
                         "leave out what it gave: pass a new compare_ranks(...) call, or pass the pairs kept while "
                         "looping (pairs.append((rank, result.slim()))) with not_compared=its .not_compared")

    for name, given in (("reports", reports), ("not_compared", not_compared)):
        if given is not None and not isinstance(given, Mapping):  # else an AttributeError once every rank is done
            raise UsageError(f"ranks_overview: {name} must be a mapping of rank -> "
                             f"{'report paths' if name == 'reports' else '(base input, comparison input)'}, not "
                             f"{type(given).__name__}")
    if not_compared is not None:
        not_compared = _not_compared(not_compared)
    rows: list[tuple[Unit, dict[str, tuple[int, int]] | None, list[str]]] = []
    inputs: dict[Unit, tuple[str, str]] = {}
    gates: dict[Unit, int] = {}
    pcts: set[float | None] = set()
    for rank, result in _rank_pairs(results):
        if rank in inputs:
            raise UsageError(f"ranks_overview: {unit_label(rank)} is given twice (one record per rank)")
        pcts.add(result.options.fail_on_regression)
        if len(pcts) > 1:
            raise UsageError("ranks_overview: the results were compared with different fail_on_regression values "
                             f"({', '.join(sorted(map(str, pcts)))}); the overview judges every rank by one")
        rows.append((rank, rank_figures(result), []))
        inputs[rank] = (str(result.base.path), str(result.comparison.path))
        if result.options.fail_on_regression is not None:
            gates[rank] = judge_regression(result, result.options.fail_on_regression, API_FACE)[0]
        del result
    if not rows:  # the document holds one record or more (msprof_compare/schemas/ranks.schema.json)
        used = " (an iterator or generator gives its pairs once: was it used up by a loop?)" \
            if iter(results) is results else ""
        raise UsageError(f"ranks_overview: no (rank, CompareResult) pair was given{used}")
    if not_compared is None:
        not_compared = getattr(results, "not_compared", None)
    twice = sorted(set(inputs) & set(not_compared or ()), key=unit_order)
    if twice:
        raise UsageError(f"ranks_overview: {unit_label(twice[0])} is given both compared and not compared")
    given = [*inputs, *(not_compared or ())]
    kinds = {unit_noun(u) for u in given}
    if len(kinds) > 1:  # else the sheet dropped the Rank column and the job of each cycle
        raise UsageError(f"ranks_overview: {' and '.join(w for k, w in _KINDS.items() if k in kinds)} are given "
                         "together (one kind per job)")
    outside = sorted((u for u in given if unit_rank(u) not in set(selected)), key=unit_order) \
        if selected is not None else []
    if outside:
        raise UsageError(f"ranks_overview: {unit_label(outside[0])} is given, but not in rank_list "
                         f"{list(selected or ())}")
    reports = _reports(reports or {})  # read now: a generator of results may fill it as it goes
    stray = [u for u in reports if u not in inputs]  # else left out silently
    if stray:
        raise UsageError(f"ranks_overview: reports key {stray[0]!r} is no compared unit (its keys are the compared "
                         f"units: {named_units(inputs)})")
    pct = next(iter(pcts), None)
    rows = [(rank, figures, _report_paths(reports.get(rank, ()))) for rank, figures, _ in rows]

    def folder(side: int) -> str | None:  # compare_ranks' own folders, else the one holding the side's inputs
        given = getattr(results, "folders", (None, None))[side]
        if given is not None:
            return given
        found = {os.path.dirname(pair[side]) for pair in inputs.values()}
        return found.pop() if len(found) == 1 else None

    return overview(rows, inputs, (folder(0), folder(1)), gates, pct, not_compared=not_compared, rank_list=selected)


#: The kinds of unit (``units.unit_noun``) as ``ranks_overview``'s error names them.
_KINDS = {"rank": "ranks", "rank cycle": "cycles of ranks (RankCycle)",
          "cycle": "a single device's cycles (RankCycle, rank None)"}


def _unit(rank: Any) -> Unit:
    """A rank given to ``ranks_overview`` (a result's, or a ``not_compared`` key): a whole number >= 0 (a NumPy one
    as an int) or a ``RankCycle``; anything else a ``UsageError`` ("1", -1 or True were written as document ranks)."""
    if isinstance(rank, RankCycle):
        return rank
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 0:
        raise UsageError(f"ranks_overview: a rank is a whole number >= 0 or a RankCycle (got {rank!r:.80})")
    return int(rank)


def _reports(given: Mapping[Any, Any]) -> dict[Unit, Any]:
    """``ranks_overview``'s ``reports`` with its keys checked as units (``_unit``'s rule, named as the mapping's
    keys): a key that is no rank ("1", -1) was silently left out, and True (== 1) taken as rank 1's."""
    out: dict[Unit, Any] = {}
    for key, paths in given.items():
        if not isinstance(key, RankCycle) and (isinstance(key, bool) or not isinstance(key, numbers.Integral)
                                               or key < 0):
            raise UsageError(f"ranks_overview: reports key {key!r:.80} is no rank: a whole number >= 0 or a "
                             "RankCycle, as the results' units")
        out[_unit(key)] = paths
    return out


def _not_compared(given: Mapping[Any, Any]) -> dict[Unit, tuple[str | None, str | None]]:
    """``ranks_overview``'s ``not_compared`` checked before any rank loads: each rank held by one side alone, its
    input there a path (text or a path object, as ``compare_ranks`` takes it: the document holds its text), None
    on the other side, or None on both (a rank of ``rank_list`` neither folder holds). Two inputs made a record
    "only_in" one side of a rank both hold."""
    out: dict[Unit, tuple[str | None, str | None]] = {}
    for rank, paths in given.items():
        unit = _unit(rank)
        if not (isinstance(paths, tuple | list) and len(paths) == 2 and None in paths
                and all(p is None or _is_path(p) for p in paths)):
            raise UsageError(f"ranks_overview: not_compared[{rank!r}] must be (base input, comparison input), None on "
                             f"the side without the rank (got {paths!r:.80})")
        try:
            out[unit] = (None if paths[0] is None else _path_text(paths[0]),
                         None if paths[1] is None else _path_text(paths[1]))
        except TypeError:  # a path object whose __fspath__ returns neither str nor bytes
            raise UsageError(f"ranks_overview: not_compared[{rank!r}] must be (base input, comparison input), None on "
                             f"the side without the rank (got {paths!r:.80})") from None
    return out


def _rank_pairs(results: Any) -> Iterator[tuple[Unit, CompareResult]]:
    """``ranks_overview``'s ``(rank, CompareResult)`` pairs, each checked as it comes: a dict of rank -> result (the
    shape of ``reports``), a result without its rank or a rank that is no whole number >= 0 (nor a ``RankCycle``)
    raised an AttributeError, TypeError or ValueError from inside the overview ("cannot unpack non-iterable int
    object")."""
    if isinstance(results, Mapping):
        raise UsageError("ranks_overview: results must be (rank, CompareResult) pairs, not a mapping: pass its "
                         ".items()")
    if isinstance(results, str | bytes) or not isinstance(results, Iterable):
        raise UsageError("ranks_overview: results must be an iterable of (rank, CompareResult) pairs, not "
                         f"{type(results).__name__}")
    for item in results:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise UsageError(f"ranks_overview: each result must be a (rank, CompareResult) pair (got {item!r:.80})")
        rank, result = item
        rank = _unit(rank)
        if not isinstance(result, CompareResult):
            raise UsageError(f"ranks_overview: {unit_label(rank)}'s result must be a CompareResult (got "
                             f"{type(result).__name__})")
        yield rank, result
        del item, result  # before the next rank loads: this frame would hold it meanwhile


def _report_paths(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """A rank's report paths as given to ``ranks_overview``: one path alone is a list of one (not its letters, nor a
    bytes path's numbers), each path as text, as every path argument of the API (``_path``)."""
    try:
        return [_path_text(paths)] if _is_path(paths) else [_path_text(p) for p in paths]
    except TypeError:
        raise UsageError(f"ranks_overview: a rank's reports are a path or a list of paths (got {paths!r:.80})"
                         ) from None
