"""Every option of a comparison, its defaults and its validation.

Shared by the CLI (``msprof-analyze compare``, ``msprof-compare``), the
script (``performance_compare.py``) and the Python API, so all faces accept
and reject exactly the same things (reference-1 §1.3).
"""

from __future__ import annotations

import ast
import difflib
import logging
import numbers
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .errors import UsageError
from .textsafe import short_repr, short_shell_word
from .units import MAX_RANK

log = logging.getLogger("msprof-analyze")

ENABLE_FLAGS = (
    "enable_profiling_compare",
    "enable_operator_compare",
    "enable_memory_compare",
    "enable_communication_compare",
    "enable_api_compare",
    "enable_kernel_compare",
)


class FrozenMap(dict[str, str]):
    """A dict that refuses changes: ``Options.op_name_map``, so that the frozen options of a result cannot be
    changed through their one mutable field (``result.options.op_name_map["a"] = "b"`` changed what the result
    says it was run with). Still a dict (``json``, ``dict(m)``, ``==``), hashable like the rest of Options, and
    picklable for the loader processes."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError("op_name_map of Options cannot be changed: pass a new op_name_map to compare()")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (dict(self),)

    def __copy__(self) -> FrozenMap:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenMap:
        return self


@dataclass(frozen=True)
class Options:
    """Validated options of one comparison (names are the original's flag names)."""

    enable_profiling_compare: bool = False
    enable_operator_compare: bool = False
    enable_memory_compare: bool = False
    enable_communication_compare: bool = False
    enable_api_compare: bool = False
    enable_kernel_compare: bool = False
    disable_details: bool = False
    disable_module: bool = False
    max_kernel_num: int | None = None
    op_name_map: dict[str, str] = field(default_factory=dict)
    #: Names of top-level ops opened for the operator pairing (``--transparent_op``, repeatable), as if their
    #: events were removed: a one-sided annotation around the work (PARAM's ``[param|cuda]``) otherwise pairs nothing.
    transparent_op: tuple[str, ...] = ()
    use_input_shape: bool = False
    gpu_flow_cat: str = ""
    base_step: int = -1          # -1: all steps
    comparison_step: int = -1
    force: bool = False
    use_kernel_type: bool = False
    debug: bool = False
    #: Reports to write: "xlsx", "json" or both ("xlsx,json").
    output_format: str = "xlsx"
    #: Exit 3 when comparison E2E exceeds base E2E by more than this percentage (None: no gate).
    fail_on_regression: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.op_name_map, FrozenMap):  # frozen: set once, here
            object.__setattr__(self, "op_name_map", FrozenMap(self.op_name_map))

    @property
    def formats(self) -> tuple[str, ...]:
        """The report formats to write, ``output_format`` split (validated, so each is known)."""
        return tuple(self.output_format.split(","))

    @property
    def step_given(self) -> bool:
        """A step was chosen (both step options are set or neither, so the base one decides)."""
        return self.base_step >= 0

    @property
    def time_breakdown(self) -> bool:
        """The time breakdown is made: for OverallMetrics, or for the Summary and gate of --fail_on_regression."""
        return self.enable_profiling_compare or self.fail_on_regression is not None

    @property
    def by_default(self) -> bool:
        """Every comparison on, as a run without any --enable_* flag has it: a comparison the data cannot
        serve was then not asked for, so its "nothing to compare" notice is INFO, not a WARNING."""
        return all(getattr(self, name) for name in ENABLE_FLAGS)

    def notice_level(self) -> int:
        """Log level of a "this comparison has no data here" notice (``by_default``)."""
        return logging.INFO if self.by_default else logging.WARNING

    def any_detail(self) -> bool:
        """True when a comparator that needs op trees is on (operator, memory or api)."""
        return self.enable_operator_compare or self.enable_memory_compare or self.enable_api_compare


@dataclass(frozen=True)
class Face:
    """How an error names an option: the CLI's flag (``--max_kernel_num``, ``--base_step '3.0'``) or, for
    ``compare()``, the keyword argument the caller wrote (``max_kernel_num``, ``base_step=3.5``): a notebook user
    told about "--base_step" looks for a flag they never typed."""

    api: bool = False
    #: the API function taking the keywords, which the hint for the CLI's path flags typed as keywords shows
    call: str = "compare"

    def name(self, option: str) -> str:
        return option if self.api else f"--{option}"

    def given(self, option: str, value: Any) -> str:
        """The option and its value as the caller wrote them: ``option=REPR`` for ``compare()``, ``--option WORD``
        quoted for the shell on the CLI (``got``), cut to 40 characters (a 5,000-digit step would bury the line)."""
        return f"{option}={got(value, option)}" if self.api else f"--{option} {got(value, '--')}"

    def words(self, text: str, keep: tuple[str, ...] = ()) -> str:
        """``text`` naming the options as this face takes them: unchanged for the CLI; for ``compare()`` each CLI
        flag that a message made deep down (a loader's "add --force to accept it", the GPU step refusal) names
        becomes the keyword argument: ``--force`` reads ``force=True``, ``--max_kernel_num 10``
        ``max_kernel_num=10``, ``--base_step`` ``base_step``. Only a flag that starts a word is one: a quoted op
        name or a path that holds "--force" is left as it is; so is each occurrence of a ``keep`` text (the
        user's paths, ``flag_words_kept``: a folder ``runs --force`` read ``runs force=True``, no such path)."""
        if not self.api or "--" not in text:
            return text
        spans = [(m.start(), m.end()) for k in keep for m in re.finditer(re.escape(k), text)]
        if not spans:
            return _FLAG_PATTERN.sub(_as_keyword, text)
        return _FLAG_PATTERN.sub(
            lambda m: m.group(0) if any(s <= m.start() < e for s, e in spans) else _as_keyword(m), text)


def got(value: Any, name: str) -> str:
    """A value an option ``name`` was given, as a message quotes it: for a POSIX shell where the name is a flag (the
    CLI's: Python's quoting doubled a backslash and escaped a quote mark, which bash, pasted, read as other
    characters), as Python for a keyword of ``compare()``; cut to 40 characters either way (a 5,000-digit value
    would bury the line; an int past 4,300 digits has no repr)."""
    return short_shell_word(value) if name.startswith("-") else short_repr(value)


CLI_FACE, API_FACE = Face(False), Face(True)
#: ``compare_ranks()``'s face: its keywords are checked as ``compare()``'s, its hints name it
RANKS_FACE = Face(True, "compare_ranks")


#: An option's CLI flag at the start of a word, with the value that follows it when it is a number (``5``,
#: ``2.5``) or a quoted repr (``'cat'``), which only an option that takes a value consumes (``_as_keyword``).
_FLAG_PATTERN = re.compile(
    rf"(?<![^\s(])--({'|'.join(sorted((f.name for f in fields(Options)), key=len, reverse=True))})(?![\w-])"
    r"""(?: ([0-9]+(?:\.[0-9]+)?(?![\w%]|\.[0-9])|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))?""")


def flag_words_kept(*paths: str) -> tuple[str, ...]:
    """What ``Face.words`` must leave alone in a message naming ``paths`` (as typed or absolute): of each that
    holds "--", its head up to the end of the last name that does (``runs --force/``), so that the path and any
    file named inside or beside it keep their names; () for paths without "--" (nearly all)."""
    kept = []
    for path in paths:
        if "--" in path:
            end = path.find(os.sep, path.rfind("--"))
            kept.append(path if end < 0 else path[:end + 1])
    return tuple(dict.fromkeys(kept))


def _as_keyword(match: re.Match[str]) -> str:
    """One flag of ``_FLAG_PATTERN`` as the keyword argument: an on/off one as ``name=True`` (what a flag given
    means), one that takes a value as ``name=value`` when the text gives the value, else its bare name."""
    name, value = match.group(1), match.group(2)
    if name in BOOL_OPTIONS:
        return f"{name}=True" + (f" {value}" if value is not None else "")
    return f"{name}={value}" if value is not None else name


def whole_number(value: Any) -> int | None:
    """A number with an integral value as an int: Python's or NumPy's (``3``, ``3.0``, ``np.int64(3)``,
    ``np.float32(3)``) and the standard library's exact ones (``Fraction(10, 2)``, ``Decimal("5")``,
    ``Decimal("5.0")``); None for any other value (3.5, NaN, inf, a bool, text). The API's integer options take
    these: a step or kernel count computed in a notebook is often a float, a NumPy scalar or a Decimal (a
    Decimal was refused while a Fraction was taken: one rule for every kind of number)."""
    if _is_bool(value):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Rational):  # exact: float() of a huge Fraction overflows
        return int(value) if value.denominator == 1 else None
    decimal = sys.modules.get("decimal")  # not imported: no value can be a Decimal (the CLI starts without it)
    if decimal is not None and isinstance(value, decimal.Decimal):  # a Number, but no numbers.Real
        # int() of Decimal("1E+9999999") runs for minutes: beyond the digits int() takes from text, no count
        whole = value.is_finite() and value.adjusted() < 4300 and value == value.to_integral_value()
        return int(value) if whole else None
    if isinstance(value, numbers.Real):
        f = float(value)
        return int(f) if f.is_integer() else None
    return None


def _is_bool(value: Any) -> bool:
    """A Python or NumPy bool (told by its dtype: the CLI imports this module before NumPy)."""
    return isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b"


def parse_op_name_map(text: Any, face: Face = CLI_FACE) -> Any:
    """Parse ``--op_name_map`` as a Python literal (never eval)."""
    if text is None:
        return {}
    refuse_empty(text, face.name("op_name_map"), "a literal dict such as \"{'aten::mm': 'aclnnMm'}\"")
    if not isinstance(text, str):  # a value the API got (a dict, or what rule 2 refuses): nothing to parse
        return text
    if not text.strip():  # "$MAP" with MAP a space or a line break: literal_eval said only "invalid syntax"
        name = face.name("op_name_map")
        raise UsageError(f"Invalid param, {name} is blank (got {got(text, name)}); leave it out "
                         "or write a literal dict such as \"{'aten::mm': 'aclnnMm'}\"")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        # literal_eval names a call or a variable by its AST node ("<ast.Call object at 0x7f...>"): say what
        # is wanted instead; a syntax error keeps its own reason
        why = "calls and variables are not allowed" if "<ast." in str(exc) else str(exc) or type(exc).__name__
        if isinstance(exc, SyntaxError) and exc.msg:  # str() adds ast's "(<unknown>, line 1)": where, in words
            at = f"line {exc.lineno}, character {exc.offset}" if (exc.lineno or 1) > 1 else f"character {exc.offset}"
            why = f"{exc.msg} ({at})" if exc.offset else exc.msg
        raise UsageError(f"Invalid value for '{face.name('op_name_map')}': {why}; write a literal dict such as "
                         "\"{'aten::mm': 'aclnnMm'}\"") from None
    return value


def parse_transparent_op(value: Any, face: Face = CLI_FACE) -> tuple[str, ...]:
    """``--transparent_op``: one op name per flag, repeatable (the CLI gives a list), or for ``compare()`` one name
    or a list / tuple of names. Not split at commas: a ``record_function`` label is any text, a comma
    too, and the name must be the op's whole name, as the OperatorCompare sheet shows it.
    Duplicates are dropped, the order kept."""
    if value is None:
        return ()
    name = face.name("transparent_op")
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or any(not isinstance(v, str) for v in items):
        raise UsageError(f"Invalid param, {name} must be an op name or a list of op names (got {short_repr(value)})")
    for v in items:
        refuse_empty(v, name, "the whole name of an op, such as '[param|cuda]'")
        if not v.strip():
            raise UsageError(f"Invalid param, {name} is blank (got {got(v, name)}); give the whole name of an "
                             "op, such as '[param|cuda]'")
        if len(v) > 200:
            raise UsageError(f"Invalid param, the length of {name} exceeded the maximum value 200")
    return tuple(dict.fromkeys(items))


def _empty_text(value: Any) -> bool:
    """Whether an option's value is the empty text ("$VAR" with VAR unset). Only text is compared: ``==`` of a NumPy
    array or ``pd.NA`` (a notebook's cell) is no bool, and raised ValueError / TypeError in the test."""
    return isinstance(value, str) and not value


def refuse_empty(value: Any, name: str, give: str) -> None:
    """Refuse an empty value of ``name`` (the option as the face names it), saying what to ``give`` instead. The
    one rule of every face: an empty value is what ``--output_format "$FMT"`` gives with FMT unset, so it is
    refused, as the original refuses ``--max_kernel_num ""``, where ``--output_format ""`` and
    ``--fail_on_regression ""`` counted as not given (a CI job that meant a gate passed every regression, said in a
    warning alone) while ``--max_kernel_num ""`` and ``--rank_list ""`` were refused. The options the original
    itself defaults to the empty text (``-o``, ``--base_step``, ``--comparison_step``, ``--gpu_flow_cat``) keep
    the original's reading: empty is that default."""
    if _empty_text(value):
        why = "a shell variable that expanded to nothing?" if name.startswith("--") else "got ''"
        raise UsageError(f"Invalid param, {name} is empty ({why}); leave it out or give {give}")


def plain_number_text(value: Any) -> bool:
    """Whether a number given as text (str, bytes or a buffer) is written as the option's help means it: ASCII
    characters and no ``_``. Python's ``int()`` and ``float()`` also take digit separators ("1_0" is 10) and the
    digits of every script ("\u0661\u0660" and the full-width "\uff11\uff10" are 10), so ``--max_kernel_num 1_0``
    silently ran with 10 where 1 or 10 may have been meant. Other values (numbers) are plain."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("latin-1")
    if not isinstance(value, str):
        return True
    return value.isascii() and "_" not in value


def strict_int(text: str) -> int:
    """``int(text)`` for an option's text, refusing what ``plain_number_text`` refuses (ValueError, as
    ``int()`` raises for "abc", so the faces' parsers report it as any other non-integer)."""
    if not plain_number_text(text):
        raise ValueError(f"{short_repr(text)} is not a valid int (digits 0-9 only)")
    return int(text)


def _parse_step(value: Any, given: str, face: Face) -> str:
    """A step option as the CLI's text: "" for none; a number with an integral value (3, 3.0, np.int64(3)) as its
    digits, so the API takes a step computed in a notebook; another number as its repr, which the step rule
    refuses. ``given``: the option and its value as the caller wrote them (``Face.given``), for the error."""
    # None, and the -1 that Options (and the JSON report's "options") record for "every step"
    if _is_bool(value):  # named: "(got True)" left the caller to guess which of the two steps it was
        raise UsageError(f"Invalid param, {_step_options(face)} must be a number. (got {given}: {_STEP_ID})")
    whole = whole_number(value)
    if value is None or whole == -1:
        return ""
    if whole is not None and abs(whole) > MAX_STEP:  # str() of an int past 4,300 digits raised ValueError
        raise _step_too_large(given, face)
    if whole is not None:
        return str(whole)
    # text as given; any other value by a repr the step rule refuses (str() of [10**5000] raised ValueError)
    return value if isinstance(value, str) else short_repr(value)


#: The largest step id: profiles record steps as int64 (a DB export's STEP_TIME.id).
MAX_STEP = 2**63 - 1
#: What the original's "must be a number." is followed by, for a step that is no step id (text, a sign, a bool).
_STEP_ID = "a step id is a whole number >= 0, the N of ProfilerStep#N"


def _step_options(face: Face) -> str:
    """The two step options as the original's step messages name them, as ``face`` takes them: the CLI's and the
    script's flags ("--base_step and --comparison_step"), as their other option messages name theirs
    (--max_kernel_num), ``compare()``'s keywords, the original's words ("base_step and comparison_step")."""
    return f"{face.name('base_step')} and {face.name('comparison_step')}"


def _step_too_large(given: str, face: Face) -> UsageError:
    return UsageError(f"Invalid param, {_step_options(face)} must be a number. (got {given}: a step id is a "
                      f"whole number from 0 to {MAX_STEP} (int64), the N of ProfilerStep#N)")


#: The on/off options (the faces pass bools; the Python API is checked so "no" cannot mean True).
BOOL_OPTIONS = tuple(f.name for f in fields(Options) if f.type in ("bool", bool))


def _flag(raw: Mapping[str, Any], name: str) -> bool:
    """An on/off option: None (not given), a Python or NumPy bool, or a number that is the integer 0 or 1 by the
    integer options' rule (``whole_number``: ``1``, ``np.int64(1)``, ``1.0``, ``Fraction(1)``, ``Decimal("1")``)."""
    return on_off(raw.get(name), name)


def on_off(value: Any, name: str) -> bool:
    """``_flag`` of one value (``api.ranks``' ``force``); ``UsageError`` naming ``name`` for any other value. A number
    follows the integer options' rule: ``max_kernel_num=Decimal("5")`` is 5, so ``force=Decimal("1")`` is on, where
    it was refused (as ``1.0`` and ``Fraction(1)`` were) while ``1`` was taken; ``0.5`` or ``2`` is refused."""
    if value is None:
        return False
    if _is_bool(value):
        return bool(value)
    whole = whole_number(value)
    if whole in (0, 1):
        return bool(whole)
    raise UsageError(f"Invalid param, {name} must be True or False (got {short_repr(value)})")


#: Keywords a caller of the API may pass for the CLI's ``-o``: the result's ``to_excel`` / ``to_json`` take it.
_OUTPUT_KEYWORDS = frozenset({"output_path", "output", "output_dir", "o"})
#: The CLI's path flags (and their internal names) typed as keywords: compare() takes the paths as arguments.
PATH_KEYWORDS = frozenset({"d", "bp", "profiling_path", "benchmark_profiling_path", "benchmark_path",
                            "base_profiling_path", "comparison_profiling_path"})


def close_names(given: str, known: Iterable[str]) -> list[str]:
    """The names of ``known`` that a mistyped ``given`` may mean, sorted: the one rule of every face (``compare()``'s
    keywords, the CLI's and the script's flags), where ``compare(step=3)`` got no hint while the CLI named
    ``--base_step`` and ``--help``, and the script none. A name is close when it begins with ``given`` as typed
    (``-b``: ``-bp``; ``--base``: ``--base_step``), holds its words whole, a plural as its singular (``step`` and
    ``steps``: ``base_step`` and ``comparison_step``; ``kernel_num``: ``max_kernel_num``), or is a near spelling
    (the nearest by difflib's ratio, 0.8 or more, leading dashes aside: ``enable_profilng_compare``), or the same
    letters with two neighbours swapped, the commonest typo, which the ratio misses in a name of four letters or
    fewer (``--hlep``: 0.75 against ``--help``; ``-pb``: ``-bp``). A comparison named by its sheets or an
    abbreviation (``_WORD_ALIASES``: ``enable_module_compare``, ``enable_op_compare``) is named in place of the
    nearest spelling, which was another comparison."""
    bare = given.lstrip("-").lower()
    words = [w for w in re.split(r"[_-]+", bare) if w]
    plain = {name: name.lstrip("-").lower() for name in known if bare and name != given}
    aliased = [_WORD_ALIASES.get(w, w) for w in words]
    found = {name for name, p in plain.items() if aliased != words and _holds(aliased, p)}
    if not found:  # the nearest spelling, unless a comparison is named by its sheets or an abbreviation (another one)
        near = set(difflib.get_close_matches(bare, list(plain.values()), n=1, cutoff=0.8))
        found = {name for name, p in plain.items() if p in near or neighbours_swapped(bare, p)}
    for name, p in plain.items():
        if name.startswith(given) or _holds(words, p):
            found.add(name)
    return sorted(found)


#: Words a user writes for an option's own word: an abbreviation, or the sheets a comparison writes (the module
#: sheets are the operator comparison's). By spelling alone --enable_op_compare read as --enable_api_compare and
#: --enable_module_compare as --enable_memory_compare: other comparisons, which a user told so would run.
_WORD_ALIASES = {"op": "operator", "ops": "operator", "module": "operator", "modules": "operator", "mem": "memory",
                 "comm": "communication", "overall": "profiling"}


def _holds(words: list[str], name: str) -> bool:
    """Whether the option ``name`` (dashes left out) holds ``words`` in a row, each whole or as its plural."""
    theirs = [w for w in re.split(r"[_-]+", name) if w]
    return bool(words) and any(all(w in (t, t + "s") for w, t in zip(words, theirs[i:i + len(words)], strict=True))
                               for i in range(len(theirs) - len(words) + 1))


def neighbours_swapped(typed: str, name: str) -> bool:
    """Whether ``typed`` is ``name`` with two neighbouring, different letters swapped ("hlep", "help"): one slip of
    the fingers, which difflib's ratio counts as two edits (0.75 in a name of four letters). The near-name hints of
    flags (``close_names``) and of input paths (``loaders._near_entry``) take it as one."""
    if len(typed) != len(name) or typed == name:
        return False
    at = [i for i, (a, b) in enumerate(zip(typed, name, strict=True)) if a != b]
    return len(at) == 2 and at[1] == at[0] + 1 and typed[at[0]] == name[at[1]] and typed[at[1]] == name[at[0]]


def _unknown_hint(names: list[str], known: set[str], call: str = "compare") -> str:
    """What to do about unknown keywords (only the API can pass them: the CLI parsers refuse unknown flags, naming
    the same ``close_names``): the options meant, for a near miss such as ``enable_profilng_compare`` or ``step``,
    and where the output target goes. "" when there is nothing to suggest. ``call``: the function given them
    (``Face.call``): ``compare_ranks(B, C, d=...)`` was told that compare() takes the paths."""
    close = []
    for name in names:
        if name not in _OUTPUT_KEYWORDS | PATH_KEYWORDS:  # "d" is no near miss of debug
            match = close_names(name, known)
            if match:
                said = " or ".join(match) if len(match) < 3 else f"{', '.join(match[:-1])} or {match[-1]}"
                close.append(f"{said} for {name}" if len(names) > 1 else said)
    hints = [f"did you mean {', '.join(close)}?"] if close else []
    if "rank_list" in names:
        hints.append("rank_list selects ranks of compare_ranks(), which compares two folders of ranks")
    if PATH_KEYWORDS.intersection(names):  # the CLI's words for the same mix-up of forms (cli.py)
        hints.append(f"{call}() takes the two paths without -d / -bp, as its first two arguments, base first: "
                     f"{call}(BASE, COMPARISON, ...)")
    if _OUTPUT_KEYWORDS.intersection(names):
        each = "the result's" if call == "compare" else "each result's"
        hints.append(f"{call}() writes no report: pass the output target to {each} to_excel() / to_json()")
    said = "".join(h + ("" if i == len(hints) - 1 else " " if h.endswith("?") else "; ") for i, h in enumerate(hints))
    return f" ({said})" if hints else ""


def build_options(**raw: Any) -> tuple[Options, list[str]]:
    """The command line's options from its flags, by option name (``checked_options`` of the CLI's face, its errors
    naming the flag): what ``cli`` checks before it reads an input, and how tests build options."""
    return checked_options(raw, CLI_FACE)


def checked_options(options: Mapping[str, Any], face: Face) -> tuple[Options, list[str]]:
    """``parse_options``, with the warnings it gave before a usage error logged before that error is raised
    (reference-1 §1.3: the original logs rule 7's use_kernel_type warning, then fails on rule 8's steps); those of
    options that pass are the caller's to log (``compare`` logs them; a check before it leaves them to it)."""
    try:
        return parse_options(options, face)
    except UsageError as exc:
        for w in getattr(exc, "warnings", ()):
            log.warning(w)
        raise


def _max_kernel_num(value: Any, face: Face) -> int | None:
    """``max_kernel_num``: None, an int > 3 given as a number with an integral value (Python or NumPy) or as the
    CLI's text of one. ``int()`` of any other value truncated it (``np.float32(5.5)`` ran as 5)."""
    if value is None:
        return None
    refuse_empty(value, face.name("max_kernel_num"), "an integer greater than 3")
    not_int = UsageError(f"Invalid param, {face.name('max_kernel_num')} has to be an integer greater than 3 "
                         f"(got {got(value, face.name('max_kernel_num'))})")
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        if not plain_number_text(value):
            raise not_int
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise not_int from None
    else:
        whole = whole_number(value)
        if whole is None:
            raise not_int
        number = whole
    if number <= 3:
        raise UsageError(f"Invalid param, {face.name('max_kernel_num')} has to be greater than 3")
    return number


def parse_options(raw: Mapping[str, Any], face: Face) -> tuple[Options, list[str]]:
    """Validate raw option values (as the faces receive them) in the original's order.

    Returns the options and the warnings to log. Raises ``UsageError`` (exit 2) naming each option as ``face``
    takes it: the CLI's flag (``--max_kernel_num``), or for ``compare()`` the keyword argument (``max_kernel_num``,
    ``base_step=3.5``)."""
    warnings: list[str] = []
    known = {f.name for f in fields(Options)}
    unknown = set(raw) - known
    if unknown:
        hint = _unknown_hint(sorted(unknown), known, face.call)
        raise UsageError(f"unknown option(s): {', '.join(sorted(unknown))}{hint}")

    flags = {name: _flag(raw, name) for name in BOOL_OPTIONS}
    # a literal that does not parse is an argument-parsing error in the original, before rule 1 below
    op_name_map = parse_op_name_map(raw.get("op_name_map"), face)
    max_kernel_num = _max_kernel_num(raw.get("max_kernel_num"), face)
    transparent_op = parse_transparent_op(raw.get("transparent_op"), face)

    if not isinstance(op_name_map, dict):
        raise UsageError(f"Invalid param, {face.name('op_name_map')} must be dict, for example: "
                         f"{face.name('op_name_map')}={{'name1':'name2'}}")
    # rule 3 over every key and value, then rule 4 (one pass per rule: a long name before a non-text one must
    # not hide the type error, as in the original's order)
    names = [*op_name_map.keys(), *op_name_map.values()]
    if any(not isinstance(n, str) for n in names):
        raise UsageError(f"Invalid param, key/value in {face.name('op_name_map')} must be string")
    if any(len(n) > 200 for n in names):
        raise UsageError(f"Invalid param, the length of key/value in {face.name('op_name_map')} exceeded the "
                         "maximum value 200")

    gpu_flow_cat = raw.get("gpu_flow_cat")
    gpu_flow_cat = "" if gpu_flow_cat is None else gpu_flow_cat  # False, 0 or [] was taken as "not given"
    if not isinstance(gpu_flow_cat, str):
        raise UsageError(f"Invalid param, {face.name('gpu_flow_cat')} must be text (got {short_repr(gpu_flow_cat)})")
    if gpu_flow_cat and not gpu_flow_cat.strip():
        name = face.name("gpu_flow_cat")
        raise UsageError(f"Invalid param, {name} is blank (got {got(gpu_flow_cat, name)}); "
                         "leave it out to use the usual flow categories")
    if len(gpu_flow_cat) > 20:
        raise UsageError(f"Invalid param, {face.name('gpu_flow_cat')} exceeded the maximum value 20")

    enables = {k: flags[k] for k in ENABLE_FLAGS}
    if not any(enables.values()):
        enables = {k: True for k in ENABLE_FLAGS}

    use_kernel_type = flags["use_kernel_type"]
    if use_kernel_type and not enables["enable_kernel_compare"]:
        warnings.append("The use_kernel_type parameter is invalid because it only takes effect "
                        "when enable_kernel_compare is enabled.")

    try:  # a usage error from here on comes after the warnings above, as in the original's log
        bstep = _parse_step(raw.get("base_step"), face.given("base_step", raw.get("base_step")), face)
        cstep = _parse_step(raw.get("comparison_step"), face.given("comparison_step", raw.get("comparison_step")),
                            face)
        if bstep and cstep:
            # ASCII digits only: str.isdigit() also accepts superscripts such as "²", which int() rejects
            bad = [face.given(n, raw[n] if face.api else v)
                   for n, v in (("base_step", bstep), ("comparison_step", cstep)) if not (v.isascii() and v.isdigit())]
            if bad:  # the original's sentence, then which value and why (-3 is a number, but no step id)
                raise UsageError(f"Invalid param, {_step_options(face)} must be a number. (got {' and '.join(bad)}: "
                                 f"{_STEP_ID})")
            for n, v in (("base_step", bstep), ("comparison_step", cstep)):
                # int() of over 4,300 digits raised ValueError: an internal error (exit 1)
                if len(v.lstrip("0")) > len(str(MAX_STEP)) or int(v) > MAX_STEP:
                    raise _step_too_large(face.given(n, raw[n] if face.api else v), face)
            base_step, comparison_step = int(bstep), int(cstep)
        elif bstep or cstep:
            # the flags as the face takes them, as the original's other option messages here do (--max_kernel_num):
            # the CLI named "base_step" bare beside "--max_kernel_num" (user walk, session 66)
            raise UsageError(f"Invalid param, {_step_options(face)} must be set at the same time.")
        else:
            base_step = comparison_step = -1

        opts = Options(
            **enables,
            disable_details=flags["disable_details"],
            disable_module=flags["disable_module"],
            max_kernel_num=max_kernel_num,
            op_name_map=FrozenMap(op_name_map),
            transparent_op=transparent_op,
            use_input_shape=flags["use_input_shape"],
            gpu_flow_cat=gpu_flow_cat,
            base_step=base_step,
            comparison_step=comparison_step,
            force=flags["force"],
            use_kernel_type=use_kernel_type,
            debug=flags["debug"],
            output_format=parse_output_format(raw.get("output_format"), face.name("output_format")),
            fail_on_regression=parse_regression_pct(raw.get("fail_on_regression"), face.name("fail_on_regression")),
        )
    except UsageError as exc:
        exc.warnings = warnings  # type: ignore[attr-defined]
        raise
    warnings.extend(_unread_options(opts))
    return opts, warnings


def _unread_options(opts: Options) -> list[str]:
    """One warning per option that no comparison of this run reads (after the original's use_kernel_type
    warning, in its words): ``--enable_api_compare --max_kernel_num 10`` changed nothing, without a word."""
    operators = "enable_operator_compare or enable_memory_compare"
    given = (("max_kernel_num", opts.max_kernel_num is not None, operators),
             ("use_input_shape", opts.use_input_shape, operators),
             ("op_name_map", bool(opts.op_name_map), operators),
             ("transparent_op", bool(opts.transparent_op), operators),
             # it hides the detail sheets of these two and stops their matching (reference-1 §1.5): nothing else
             ("disable_details", opts.disable_details, operators),
             ("disable_module", opts.disable_module, "enable_operator_compare"))
    read = {operators: opts.enable_operator_compare or opts.enable_memory_compare,
            "enable_operator_compare": opts.enable_operator_compare}
    said = [f"The {name} parameter is ignored: it only takes effect when {needs} is enabled."
            for name, on, needs in given if on and not read[needs]]
    if opts.disable_details and read[operators]:
        # the three act on the matching of operators (the key, which --op_name_map renames too; the drill-down of
        # matched pairs), which --disable_details replaces by no matching (reference-1 §1.5): the statistic
        # sheets group by each side's own names, and module paths are not matched either
        said += [f"The {name} parameter is ignored: it only takes effect when operators are matched, which "
                 "disable_details turns off." for name, on, _ in given[:3] if on]
    return said


OUTPUT_FORMATS = ("xlsx", "json")


def list_items(text: str) -> list[str]:
    """The items of a list option's text: commas or blanks separate them ("json xlsx", "0, 3"); an empty item
    between commas is kept as "" for the caller to refuse ("xlsx,", "0,,1")."""
    items: list[str] = []
    for part in text.split(","):
        items.extend(part.split() or [""])
    return items


def parse_output_format(value: Any, name: str = "--output_format") -> str:
    """``--output_format``: "xlsx", "json" or both (separated by a comma or blanks, any order, any case) -> canonical
    "xlsx,json"; ``name``: the option as an error names it. An empty item between commas (``xlsx,``, ``xlsx,,json``:
    a list built from a variable that was unset) is refused, as ``--rank_list 0,,1`` is: "xlsx," ran with the
    workbook alone where the second format was meant; blanks around an item are no item (``xlsx, json``). A
    repeated item (``json,json``, ``JSON json``) is refused too: it was taken silently as the one format."""
    if value is None:
        return "xlsx"
    refuse_empty(value, name, "xlsx, json or xlsx,json")

    def bad(why: str = "") -> UsageError:
        return UsageError(f"Invalid param, {name} must be xlsx, json or xlsx,json (got {got(value, name)}{why})")

    # the API's formats as a sequence, each item one format: a 1-D array or a set too, as rank_list takes them
    # (np.array(["json"]) was refused while rank_list=np.array([0, 1]) was taken)
    if isinstance(value, (list, tuple, set, frozenset)) or getattr(value, "ndim", 0) == 1:
        items = [i.strip() if isinstance(i, str) else "?" for i in value]  # str() of a 5,000-digit int raised
    elif isinstance(value, str):
        items = list_items(value)
    else:  # a number, a dict, ...: no format
        raise bad()
    if len(items) > 1 and "" in items:
        raise bad(": an empty item")
    named = [i.lower() for i in items if i]
    chosen = set(named)
    if not chosen or chosen - set(OUTPUT_FORMATS):
        raise bad()
    if len(named) > len(chosen):  # "json,json": a list built by hand, the other format likely meant
        raise bad(f": a repeated item, {next(f for f in named if named.count(f) > 1)}")
    return ",".join(f for f in OUTPUT_FORMATS if f in chosen)


def parse_regression_pct(value: Any, name: str = "--fail_on_regression") -> float | None:
    """``--fail_on_regression PCT``: a finite percentage >= 0, or None when not given; ``name``: the option as an
    error names it."""
    if value is None:
        return None
    refuse_empty(value, name, "a percentage such as 5")
    if _is_bool(value):  # True is not "1 percent"
        raise UsageError(f"Invalid param, {name} must be a number of percent (got {got(value, name)})")
    number = value.strip().removesuffix("%") if isinstance(value, str) else value  # "5%" reads as 5
    # float() takes "_" between digits: "1_0" read as 10 would pass a 9 % regression meant to fail above 1.0;
    # and any script's digits ("\u0661\u0660", full-width "\uff11\uff10")
    if not plain_number_text(number):
        raise UsageError(f"Invalid param, {name} must be a number of percent (got {got(value, name)})")
    try:
        pct = float(number)
    except OverflowError:  # an int past float's range (10**400): no finite percentage
        pct = float("inf")
    except (TypeError, ValueError):
        raise UsageError(f"Invalid param, {name} must be a number of percent (got {got(value, name)})") from None
    if not (pct >= 0.0) or pct == float("inf"):
        raise UsageError(f"Invalid param, {name} must be a finite percentage >= 0 (got {got(value, name)})")
    return pct + 0.0  # -0.0 -> 0.0: the gate line would read "threshold +-0%"


def parse_rank_list(value: Any, name: str = "--rank_list") -> tuple[int, ...] | None:
    """``--rank_list``, msprof-analyze's cluster flag: None (every rank) for "all" or nothing given, else the
    rank ids (integers from 0 to ``units.MAX_RANK``) in rank order. In text, commas or blanks separate the ids
    ("0,3", "0, 3", "0 3"), as they separate ``--output_format``'s items: "0 3" was refused while "json xlsx" was
    taken; an empty item between commas ("0,,1") is refused for both, and so is a repeated id ("0,0", "1,01"): it
    was dropped silently, where another rank was likely meant. The API also takes a sequence of whole numbers.
    ``name``: the option as an error names it."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return None
    refuse_empty(value, name, "all or rank ids such as 0,3")
    if isinstance(value, str):
        items: list[Any] = list_items(value)
    elif isinstance(value, (list, tuple, range, set, frozenset)) or getattr(value, "ndim", 0) == 1:  # 1-D array
        items = list(value)
    else:
        items = [value]  # one rank given as a number: the checks below take or refuse it

    def bad(why: str) -> UsageError:
        return UsageError(f"Invalid param, {name} must be all or rank ids (integers from 0 to {MAX_RANK}) separated "
                          f"by commas or blanks (got {got(value, name)}: {why})")  # a 5,000-digit one cut

    ranks: list[int] = []
    for item in items:
        if isinstance(item, str):
            text = item.strip()
            if not text:
                raise bad("an empty item")
            # "-1", "1.0", "1_0", other scripts' digits, 2**31 and above (``units.MAX_RANK``); told by the digits'
            # count first: int() of 5,000 digits raised ValueError past its 4,300-digit limit, an internal error
            digits = text.lstrip("0") or "0"
            if not (text.isascii() and text.isdigit()) or len(digits) > 10 or int(digits) > MAX_RANK:
                raise bad(f"{got(text, name)} is not a rank id")
            ranks.append(int(digits))
        else:
            whole = whole_number(item)
            if whole is None or not 0 <= whole <= MAX_RANK:
                raise bad(f"{short_repr(item)} is not a rank id")
            ranks.append(whole)
    if not ranks:
        raise bad("no rank id")
    seen: set[int] = set()
    for rank in ranks:  # after every item is checked, as --output_format's unknown item is refused first
        if rank in seen:
            raise bad(f"a repeated item, {rank}")
        seen.add(rank)
    return tuple(sorted(seen))
