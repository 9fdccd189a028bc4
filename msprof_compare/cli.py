"""Command-line faces: ``msprof-analyze compare``, ``msprof-compare`` and ``performance_compare.py``.

All three parse the original's flags (reference-1 §1.1-1.2), then share one
run path (``execute``): validate the output target, ``api.compare()``, print
the console tables, write the chosen reports (workbook, JSON) and apply the
``--fail_on_regression`` gate (status 3). Unlike the original, failures end the
process with a non-zero status and one ``error:`` line on stderr
(2 = bad usage, 1 = bad data or internal error); tracebacks only with --debug.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import logging
import os
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from .errors import OutOfMemory, ProfileError, UsageError, on_side, side_named
from .logs import RankNotices, run_logging
from .textsafe import one_line, shell_word, short_repr, short_shell_word, term_safe, wrap_prose, write_line
from .units import Unit, named_units, unit_label, unit_noun, unit_stem

if TYPE_CHECKING:  # pragma: no cover
    from .loaders.heads import TraceHeads

#: What the step options limit, said in their help: a text export's time breakdown stays the whole profile's
STEP_SCOPE = "a text export's OverallMetrics and waterfall cover the whole profile even so, as in the original"
HELP = {
    # The original's texts, each with what the option is (they name neither side nor what -o may be)
    "profiling_path": "Path of the profiling data (the comparison side; folders of a multi-rank run's profiles on "
                      "both sides compare rank by rank, and a profiler schedule's cycles cycle by cycle)",
    "benchmark_profiling_path": "Path of the benchmark data (the base side; folders of a multi-rank run's "
                                "profiles on both sides compare rank by rank, and a profiler schedule's cycles cycle "
                                "by cycle)",
    "enable_profiling_compare": "Enable overall performance comparison (the console table and the OverallMetrics "
                                "sheet, and the E2E waterfall of the console and the Summary sheet)",
    "enable_operator_compare": "Enable operator performance comparison (the module sheets where both sides have "
                               "module data, else the operator sheets)",
    # the two one-liners named no sheet, where every other comparison's help did (user walk, session 68)
    "enable_memory_compare": "Enable operator memory comparison (MemoryCompareStatistic and MemoryCompare: the "
                             "memory allocated inside each operator, which profile_memory=True records)",
    "enable_communication_compare": "Enable communication performance comparison (CommunicationCompare: the time "
                                    "of each collective op type and, on NPU data, of its tasks)",
    "enable_api_compare": "Enable API performance comparison (ApiCompare: the host time of each torch op, "
                          "annotation and runtime call, by name)",
    "enable_kernel_compare": "Enable kernel performance comparison (KernelCompare: each kernel's time by name "
                             "and input shape, or KernelTypeCompare with --use_kernel_type; NPU data on both "
                             "sides; with a GPU side it is skipped, with a warning)",
    "disable_details": "Hide detailed comparison (the ModuleCompare, OperatorCompare and MemoryCompare sheets; "
                       "no operator or module is paired then)",
    "disable_module": "Hide module comparison (compare operators even when module data exists)",
    "output_path": "Path of comparison result (a directory, default the current one; a name ending in .xlsx or "
                   ".json names the report file, whose extension follows --output_format: -o run.json writes "
                   "run.xlsx by default)",
    # "(N > 3: ...)" named an N the usage line does not show (it reads INTEGER)
    "max_kernel_num": "The number of kernels per torch op is limited (an integer above 3: a matched op with more "
                      "kernels than that is compared through its child ops)",
    "op_name_map": "The mapping of operator names equivalent to GPUs and NPUs in the form of dictionaries (a dict "
                   "literal: \"{'name on one side': 'its name on the other'}\")",
    "transparent_op": "Name of an op to see through when operators are matched, as if its event were removed: its "
                      "child ops are compared in its place, at the top level and where --max_kernel_num drills into "
                      "a pair (an annotation on one side only, such as PARAM's [param|cuda], otherwise pairs "
                      "nothing); the op's whole name, once per flag, repeatable",
    "use_input_shape": "Enable precise matching of operators (by name and input shape, not by name alone)",
    "gpu_flow_cat": "Identifier of the GPU connection (the flow category linking ops to kernels, in place of the "
                    "usual ac2g, async, async_gpu and async_cpu_to_gpu; at most 20 characters)",
    # a text export's time breakdown ignores the step (as the original's OverallMetrics): the help said nothing of
    # it, and a user learnt it from a warning after the run (user walk, session 66)
    "base_step": "Step to compare in the benchmark (base) data (NPU data only; give both step options; the N of "
                 f"ProfilerStep#N; {STEP_SCOPE})",
    "comparison_step": "Step to compare in the profiling (comparison) data (NPU data only; give both step "
                       f"options; the N of ProfilerStep#N; {STEP_SCOPE})",
    "force": "Indicates whether to skip verification of the owner, size, and permissions. (Also accepts "
             "symbolic links and inputs over the size caps.)",
    "use_kernel_type": "Indicates whether kernel compare use op_statistic.csv (KernelTypeCompare: kernels by op "
                       "type; a DB export's from its task rows)",
    "debug": "Debug Mode. Shows full stack trace when error occurs.",
    "output_format": "Reports to write: xlsx (default), json, or xlsx,json; with -o - the JSON goes to stdout "
                     "(and xlsx,json writes the workbook into the current directory)",
    # both faces: the script has no -bp / -d, so its help names its two paths too
    "rank_list": "Ranks to compare when both inputs are folders of ranks (-bp and -d, or both paths of "
                 "performance_compare.py): all (default) or rank ids separated by "
                 "commas or blanks, e.g. 0,3 (as msprof-analyze's cluster modes take it; a listed rank a folder "
                 "lacks is not compared)",
    "fail_on_regression": "Exit with status 3 when the comparison E2E time exceeds the base by more than PCT percent, "
                          "given as 5 or 5% (it also runs the time breakdown, and exits 1 when a side has no E2E "
                          "time)",
}
SHORT_HELP = "Compare the performance differences between GPUs and NPUs."
SCRIPT_DESCRIPTION = "Compare trace of GPU and NPU"
#: Under the options of every face: the original's help leaves unsaid what to pass (a MindSpore user found no word
#: of *_ascend_ms: user walk 74) and what a run without any --enable_* does, and
#: a CI script's author read no exit status (3 for --fail_on_regression alone) nor where the JSON is described (in the
#: installed package, not a checkout's docs/: a pip user has no checkout); nor has a pip user a README.md file, but
#: pyproject's ``readme`` makes it the installed metadata's description, which Python reads.
HELP_EPILOG = ("Each path (-bp, -d) is a PyTorch Kineto trace (*.pt.trace.json, or .json.gz), or an Ascend "
               "profiling folder of torch_npu (*_ascend_pt) or MindSpore 2.x (*_ascend_ms), its "
               "ASCEND_PROFILER_OUTPUT, its trace_view.json or its ascend_*_profiler_*.db. "
               "With no --enable_* option, every comparison runs. Exit status: 0 done (a run within "
               "--fail_on_regression too), 1 unreadable or invalid data (or no E2E time for --fail_on_regression to "
               "judge), 2 bad usage, 3 a regression beyond --fail_on_regression (the reports are written), 130 "
               "interrupted. README.md (Errors and exit codes; CI regression gate) says more; pip installs it as "
               "the package's description, in Python importlib.metadata.metadata('msprof_compare')"
               ".json['description']. The JSON report's schema ships with the package: "
               "msprof_compare/schemas/result.schema.json, in Python msprof_compare.schema('result').")
#: performance_compare.py takes its two paths without -bp / -d, which its help named as the paths to give.
SCRIPT_HELP_EPILOG = HELP_EPILOG.replace("Each path (-bp, -d)", "Each path (base_profiling_path, "
                                         "comparison_profiling_path)", 1)
ROOT_WARNING = ("Security Warning: Do not run this tool as root. Running with elevated privileges may "
                "compromise system security. Use a regular user account.")
OVERALL_HINT = ("The OverallMetrics sheet page is more comprehensive for the disaggregate of performance data, "
                "and it is recommended to view the overall performance comparison results from the "
                "performance_comparison_result_*.xlsx.")


def overall_hint(output: str, formats: tuple[str, ...] = ("xlsx",)) -> str:
    """The original's line pointing at the workbook, naming the workbook where ``-o`` names the file (``-o run.xlsx``,
    ``-o run.json``): "performance_comparison_result_*.xlsx" sent such a user looking for a file never written.
    A taken name gets a ``_N`` suffix, as publishing gives it (``deliver.workbook_name``: with the JSON written
    too, one free for both): naming run.xlsx beside an older run.xlsx sent the user to the old report while
    run_1.xlsx was written."""
    from .report.deliver import workbook_name

    name = workbook_name(output, formats)
    return OVERALL_HINT.replace("performance_comparison_result_*.xlsx", name) if name else OVERALL_HINT


def rows_legend(base: str, comparison: str) -> str:
    """The line under the original's table, whose first column names only the hardware ("NPU" twice for an NPU
    pair): which row is which, each with its input as typed (a leading ``=`` dropped, as the loaders drop it).
    Nothing on stdout named the inputs, so two given the wrong way round (``-d`` is the comparison) read as the
    opposite verdict, with no word to catch it by."""
    return f"Rows: base first ({base.lstrip('=')}), comparison second ({comparison.lstrip('=')})."


_CONTEXT = {"help_option_names": ["-h", "-H", "--help"]}
VERSION_HELP = "Show the tool's version and exit."


def version_line() -> str:
    """What ``--version`` prints on every face: the tool's name and version as the JSON report's ``tool`` names
    them, so that a bug report can say which release ran."""
    from . import __version__

    return f"msprof-compare {__version__}"


def _show_version(value: bool) -> None:
    """``--version``'s callback: eager, so that it answers before the required -d / -bp are looked for."""
    if value:
        typer.echo(version_line())
        raise typer.Exit()


def clean_path(value: str | None) -> str | None:
    """A path option (an input, ``-o``) as the original post-processes it, a leading ``=`` dropped (``-d=X`` typed
    ``-d =X``), but ``~`` kept: it is expanded where the path is used (``loaders.paths.typed_path``: the loaders, and
    ``execute`` for ``-o``), as ``compare()``'s, so the messages name the path as typed. A ``~`` reaches the tool only
    where the shell left it (quoted, or after ``-d=``); expanded here, "error: /home/me/run: no such file or
    directory" named a path the user never typed."""
    return None if value is None else value.lstrip("=")


def _output_as_typed(shown: str) -> Callable[[str], str]:
    """A message's text with ``-o``'s path, which the run uses ``~`` expanded (``typed_path``), named as typed
    (``shown``): the checks and notices name the expanded path (``output /home/me/x: ...``) in many places, this
    one rewrite names it ``~/x`` in all of them, as an input is named. Only the path itself, whole, and for a
    report file its companion (``-o "~/run.json"``: "written as ~/run.xlsx"): a file inside it, as the "has been
    generated" lines name the reports (absolute, as the original's), is left as it is."""
    from .loaders.paths import typed_path

    used = typed_path(shown)
    if used == shown:
        return lambda text: text
    tilde = shown.replace(os.sep, "/").split("/", 1)[0]  # "~" or "~user": all that expanding changes
    home, typed = term_safe(typed_path(tilde)), term_safe(tilde)
    forms = [used]
    stem, ext = os.path.splitext(used)
    if ext.lower() in (".xlsx", ".json"):
        forms += [stem + ".xlsx", stem + ".json"]
    alternatives = "|".join(re.escape(term_safe(f)) for f in sorted(set(forms), key=len, reverse=True))
    # the path where one starts (not the tail of a longer one) and ends (not followed by more of a path)
    found = re.compile(f"(?<![^\\s'\"(=:,;])(?:{alternatives})(?=$|[\\s:,;()'\"]|\\.(?:$|\\s))")
    return lambda text: found.sub(lambda m: typed + m[0][len(home):], text)


# --------------------------------------------------------------------------- typer command


def _why_no_int(text: str) -> str:
    """Why an integer option's text is no integer, the same on both faces: " (digits 0-9 only)" for what
    ``options.strict_int`` refuses (digit separators, other scripts' digits), " (5,000 digits)" past ``int()``'s
    4,300-digit limit (the text itself is quoted cut: ``short_repr``), else ""."""
    from .options import plain_number_text

    if not plain_number_text(text):
        return " (digits 0-9 only)"
    digits = text.strip().lstrip("+-")  # ASCII: plain_number_text
    return f" ({len(digits):,} digits)" if digits.isdigit() else ""


def _strict_int(text: str, refused: Callable[[str, str], Exception]) -> int:
    """An integer option's text as ``options.strict_int`` reads it (not the digit separators and other scripts'
    digits that ``int()`` takes: "1_0" is refused, not read as 10); ``refused(shown text, reason)``: the face's
    error for any other text. An empty text is left as it is, for ``options.refuse_empty``, whose line every face
    gives for an empty value."""
    from .options import strict_int

    if not text:
        return text  # type: ignore[return-value]
    try:
        return strict_int(text)
    except ValueError:
        raise refused(short_repr(text), _why_no_int(text)) from None


def _cli_int(text: str) -> int:
    """An integer option's text as click's int type reads it, with click's words for a refusal."""
    return _strict_int(text, lambda shown, why: typer.BadParameter(f"{shown} is not a valid int{why}."))


def _script_int(text: str) -> int:
    """``type=`` of the script's integer options: argparse's "invalid int value: '1_0'", with the reason, for
    what ``options.strict_int`` refuses, as for any other text that is no integer (argparse's own message quoted
    the text whole, a 5,000-digit one too)."""
    return _strict_int(text, lambda shown, why: argparse.ArgumentTypeError(f"invalid int value: {shown}{why}"))


def compare_command(
    comparison_profiling_path: str = typer.Option(
        ..., "--profiling_path", "-d", help=HELP["profiling_path"], callback=clean_path, show_default=False),
    base_profiling_path: str = typer.Option(
        ..., "--benchmark_profiling_path", "--benchmark_path", "-bp", help=HELP["benchmark_profiling_path"],
        callback=clean_path,
        show_default=False),
    enable_profiling_compare: bool = typer.Option(
        False, "--enable_profiling_compare", help=HELP["enable_profiling_compare"]),
    enable_operator_compare: bool = typer.Option(
        False, "--enable_operator_compare", help=HELP["enable_operator_compare"]),
    enable_memory_compare: bool = typer.Option(False, "--enable_memory_compare", help=HELP["enable_memory_compare"]),
    enable_communication_compare: bool = typer.Option(
        False, "--enable_communication_compare", help=HELP["enable_communication_compare"]),
    enable_api_compare: bool = typer.Option(False, "--enable_api_compare", help=HELP["enable_api_compare"]),
    enable_kernel_compare: bool = typer.Option(False, "--enable_kernel_compare", help=HELP["enable_kernel_compare"]),
    disable_details: bool = typer.Option(False, "--disable_details", help=HELP["disable_details"]),
    disable_module: bool = typer.Option(False, "--disable_module", help=HELP["disable_module"]),
    output_path: str | None = typer.Option(
        None, "--output_path", "-o", help=HELP["output_path"], callback=clean_path, show_default=False),
    max_kernel_num: int | None = typer.Option(None, "--max_kernel_num", help=HELP["max_kernel_num"],
                                              parser=_cli_int, metavar="INTEGER"),
    op_name_map: str = typer.Option("{}", "--op_name_map", help=HELP["op_name_map"]),
    transparent_op: list[str] | None = typer.Option(None, "--transparent_op", help=HELP["transparent_op"],
                                                    metavar="NAME", show_default=False),
    use_input_shape: bool = typer.Option(False, "--use_input_shape", help=HELP["use_input_shape"]),
    gpu_flow_cat: str = typer.Option("", "--gpu_flow_cat", help=HELP["gpu_flow_cat"]),
    base_step: str = typer.Option("", "--base_step", help=HELP["base_step"]),
    comparison_step: str = typer.Option("", "--comparison_step", help=HELP["comparison_step"]),
    force: bool = typer.Option(False, "--force", help=HELP["force"]),
    use_kernel_type: bool = typer.Option(False, "--use_kernel_type", help=HELP["use_kernel_type"]),
    debug: bool = typer.Option(False, "--debug", help=HELP["debug"]),
    output_format: str | None = typer.Option(None, "--output_format", help=HELP["output_format"],
                                             show_default=False),
    fail_on_regression: str | None = typer.Option(None, "--fail_on_regression", metavar="PCT",
                                                  help=HELP["fail_on_regression"], show_default=False),
    rank_list: str | None = typer.Option(None, "--rank_list", metavar="LIST", help=HELP["rank_list"],
                                         show_default=False),
    version: bool = typer.Option(False, "--version", help=VERSION_HELP, callback=_show_version, is_eager=True,
                                 expose_value=False),
) -> dict[str, Any]:
    """Compare the performance differences between GPUs and NPUs."""
    # Parsing only: the caller runs the comparison, so parse errors and run errors stay apart.
    params = dict(locals())
    del params["version"]  # answered by its callback: never an option of the run
    return params


class _OrderedHelp:
    """Help option names listed in the order given: click makes a set of them, so --help printed
    "-h, -H, --help" or "-H, -h, --help" depending on the run's string hash seed."""

    def get_help_option_names(self, ctx: Any) -> list[str]:
        taken = _option_names(self)
        return [n for n in ctx.help_option_names if n not in taken]


class _Command(_OrderedHelp, TyperCommand):
    pass


class _Group(_OrderedHelp, TyperGroup):
    pass


def _analyze_app() -> typer.Typer:
    app = typer.Typer(add_completion=False, rich_markup_mode=None, cls=_Group,
                      context_settings=_CONTEXT, help="msprof-analyze: performance analysis tools.")

    @app.callback()
    def _group(version: bool = typer.Option(False, "--version", help=VERSION_HELP, callback=_show_version,
                                            is_eager=True, expose_value=False)) -> None:
        """msprof-analyze: performance analysis tools (this package provides `compare`)."""

    app.command("compare", help=SHORT_HELP, short_help=SHORT_HELP, epilog=HELP_EPILOG, context_settings=_CONTEXT,
                cls=_Command)(compare_command)
    return app


def _compare_app() -> typer.Typer:
    app = typer.Typer(add_completion=False, rich_markup_mode=None, context_settings=_CONTEXT)
    app.command(help=SHORT_HELP, epilog=HELP_EPILOG, context_settings=_CONTEXT, cls=_Command)(compare_command)
    return app


def _click_exception_types() -> tuple[type[Exception], type[Exception]]:
    """Typer's UsageError / ClickException classes (vendored click in new typer, click in old)."""
    mro = [c for c in typer.BadParameter.__mro__ if issubclass(c, Exception)]
    usage = next(c for c in mro if c.__name__ == "UsageError")
    base = next((c for c in mro if c.__name__ == "ClickException"), usage)
    return usage, base


def _run_typer(app: typer.Typer, args: list[str] | None, prog: str) -> int:
    with run_logging():
        return _typer_main(app, args, prog)


def _typer_main(app: typer.Typer, args: list[str] | None, prog: str) -> int:
    args = sys.argv[1:] if args is None else list(args)
    _usage_error, click_error = _click_exception_types()
    try:
        # typer reads every option's annotations here (a noticeable part of the start): Ctrl-C is handled as below
        command = typer.main.get_command(app)
        args = _eager_request(command, args) or args
        taken = _option_as_value(command, args) or _one_dash_long(command, args)
        if taken:
            where = f"{prog} compare" if hasattr(command, "commands") else prog
            _error(f"{taken} (see '{where} --help')")
            return 2
        rv = command.main(args=args, prog_name=prog, standalone_mode=False)
    except SystemExit:
        # click ends a write to a closed pipe (--help | head -0) itself: it wraps stdout and stderr so that
        # nothing more fails, then sys.exit(1) (the only exit of main without standalone mode); a closed
        # pipe ends a run normally here, as for the console table and the JSON on stdout
        if type(sys.stdout).__name__ != "PacifyFlushWrapper":
            raise
        from .report.output import discard_rest

        discard_rest(sys.stdout)
        return 0
    except OSError as exc:  # --help written to a full stdout, or to a closed pipe that Windows reports as EINVAL
        from .report.output import closed_pipe, discard_rest

        if closed_pipe(exc):
            discard_rest(sys.stdout)
            return 0
        _error(f"cannot write to standard output: {exc.strerror or exc}")
        return 1
    except click_error as exc:
        message = one_line(exc.format_message())
        message = message.replace(" / '--benchmark_path'", "")  # the alias stays out of the original's text
        message = message.replace(" (env var: 'None')", "")  # click 8.2.0-8.2.1 name an unset env var so
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else prog
        if where == prog and "compare" in args and hasattr(command, "commands"):
            where += " compare"  # click reports some of the sub-command's option errors in the group's context
        misplaced = _misplaced_option(command, args) if message.startswith("No such option") else None
        if misplaced:
            # click names only the first letter of a short option it cannot place ("-bp": "No such option: -b")
            message = (f"No such option: {misplaced}; the comparison is the 'compare' sub-command, its options "
                       f"follow it: {prog} compare -d COMPARISON -bp BASE [options]")
            where = f"{prog} compare"
        if message.startswith("No such option: ") and not misplaced:
            # the options of options.close_names, as the script and compare() name them, in place of click's own
            # (by similarity alone: "--step" got --base_step and --help, not --comparison_step; "-b" nothing)
            given = getattr(exc, "option_name", None) or message[len("No such option: "):].split()[0]
            given = _typed_cluster(args, given, _flags_of(command, args))
            near = _near_options(command, args, given)
            message = f"No such option: {given}" + (f" (Possible options: {', '.join(near)})" if near else "")
        if message.startswith("Missing option") and _stray_arguments(command, args):
            # the script's command line (BASE COMPARISON, no flags) given to a CLI face: say where the paths go
            face = f"{prog} compare" if hasattr(command, "commands") else prog
            # one sentence, which "(see ...)" ends, as every line of ours
            message += (f" The paths are options here: {face} -d COMPARISON -bp BASE (performance_compare.py "
                        "takes them without -d / -bp, base first)")
        if message.startswith("Missing command") and hasattr(command, "commands"):
            # a bare msprof-analyze: what to type, not click's word alone; one sentence, which "(see ...)" ends
            message = f"Missing command: the one command is 'compare': {prog} compare -d COMPARISON -bp BASE [options]"
        if message.startswith("No such command") and hasattr(command, "commands"):
            # every face with sub-commands is msprof-analyze (python -m msprof_compare too), not just its launcher
            message += " This msprof-analyze provides only 'compare'; the original's other commands (cluster, "
            message += "advisor, ...) are not part of it"
        _error(f"{message} (see '{where} --help')")
        return int(getattr(exc, "exit_code", 2) or 2)
    except (typer.Abort, KeyboardInterrupt):
        _error("interrupted")
        return 130
    if isinstance(rv, dict):
        return execute({**rv, REPEATED: _repeated_values(command, args)})
    if rv == 130:  # Ctrl-C while parsing: typer turns it into Exit(130), which main returns without a word
        _error("interrupted")
        return 130
    return int(rv or 0)  # --help, or a group invoked without a sub-command


def _eager_request(command: Any, args: list[str]) -> list[str] | None:
    """The arguments of the help (or version) asked for, where ``--help``, ``-h``, ``-H`` or ``--version`` stands
    as an option anywhere (not after ``--``, nor where the option before it takes a value: ``-o --help`` is a
    value left out, refused as the script's argparse refuses it), else None: ``compare --help -o --force`` was
    refused for the ``-o`` with no value, and ``compare --bogus --help`` for ``--bogus``, where the script prints
    its help, as click does for the first. A group's own one (``msprof-analyze --help compare``) asks for the
    group's help, one after ``compare`` for the command's; one after another word is that word's, a command this
    package lacks (``msprof-analyze cluster --help``: the line that says so, not the group's help and exit 0)."""
    eager = {*_CONTEXT["help_option_names"], "--version"}
    sub, rest = _compare_args(command, args)
    head = args[:len(args) - len(rest)] if sub is not None else args  # a group's up to its word, "compare"
    for word in head:  # a group's own arguments take no value
        if word == "--" or (not word.startswith("-") and word != "compare"):
            return None
        if word in eager:
            return [word]
    takes_value = _option_names(sub, value_only=True)
    i = 0
    while i < len(rest) and rest[i] != "--":
        if rest[i] in eager:
            return [*head, rest[i]]
        # "--" after an option ends the options, as ``_option_as_value`` reads it: "-o -- --help" is no help
        i += 2 if rest[i] in takes_value and rest[i + 1:i + 2] != ["--"] else 1
    return None


def _option_as_value(command: Any, args: list[str]) -> str | None:
    """The refusal of an option of ``compare`` whose value is missing, the next argument being an option of its own
    (``-o --enable_api_compare``, ``-d -o out``), else None. click takes any next word as the value: the run wrote
    into a folder named ``--enable_api_compare`` with every comparison on (the flag eaten), or said that the word
    after was an extra argument. The rule is the script's argparse's, which refuses these ("expected one
    argument"): a word that reads as an option is no value, whether an option name (``--name=value`` or
    ``-x=value`` of one too: ``-bp -d=C`` said -d was missing) or not (``-o --enable_api``, an abbreviation the
    script takes, ``-o --foo``, ``-o -ofoo``: folders of those names), and ``--``, the end of the options (``-o --``
    wrote into a folder named ``--``); ``-o -``, a negative number (a step ``-1``) and a word with a blank in it
    are values, and reach their own checks."""
    command, args = _compare_args(command, args)
    takes_value = _option_names(command, value_only=True)
    known = _option_names(command) | set(_CONTEXT["help_option_names"])
    i = 0
    while i < len(args) - 1 and args[i] != "--":
        arg, after = args[i], args[i + 1]
        if arg not in takes_value:
            i += 1
            continue
        named = after.split("=", 1)[0] in known  # "-d=C" too: click reads it as -d with the value C
        if after == "--" or named or _reads_as_option(after):
            what = "ends the options" if after == "--" else "is an option" if named else "reads as an option"
            return (f"Option '{arg}' requires an argument: {term_safe(shell_word(after))}, after it, {what} "
                    f"(a value that reads as one: {term_safe(shell_word(f'{arg}={after}'))})")
        i += 2
    return None


def one_dash_name(words: list[str], flags: Collection[str], takes_value: Collection[str]) -> str | None:
    """The first of ``words`` (an option's, before any ``=``) that is a long option of ``flags`` typed with one dash
    (``-output_path``, ``-output-path``, ``-debug``), or the start of one, three letters or more (``-output``,
    ``--output`` with one dash, which the script's argparse takes as an abbreviation), else None; the value after an
    option of ``takes_value`` is skipped, and the words after ``--``. Both faces' parsers read such a word as the
    short option of its first letter with the rest attached as that option's value: ``-output_path x`` wrote into
    a folder named ``utput_path`` and said ``x`` was an extra argument, ``-output`` into ``utput``, ``-debug``
    read ``ebug`` as the comparison's path."""
    i = 0
    while i < len(words) and words[i] != "--":
        word = words[i]
        name = word.split("=", 1)[0]
        if word not in flags and len(name) > 3 and name[1] != "-" and name.startswith("-") and any(
                f.startswith(_two_dash(name)) for f in flags):
            return name
        i += 2 if word in takes_value else 1
    return None


def _two_dash(name: str) -> str:
    """The long option a word typed with one dash stands for (``-output-path``: ``--output_path``)."""
    return "--" + name[1:].replace("-", "_")


def meant_options(given: str, flags: Collection[str]) -> list[str]:
    """The options of ``flags`` an unknown ``given`` may mean, sorted, on the CLI faces and the script:
    ``options.close_names``, and for a word ``one_dash_name`` refuses, the long options its two-dash form starts
    (``-out``: --output_format and --output_path), which close_names, reading the word as typed, misses."""
    from .options import close_names

    near = set(close_names(given, flags))
    if one_dash_name([given], flags, ()) == given:
        near.update(f for f in flags if f.startswith(_two_dash(given)))
    return sorted(near)


def _one_dash_long(command: Any, args: list[str]) -> str | None:
    """The refusal of a long option of ``compare`` typed with one dash (``one_dash_name``), with the option
    meant, else None: the line of any unknown option, in place of a run that read it as ``-o`` or ``-d``."""
    sub, rest = _compare_args(command, args)
    dashed = one_dash_name(rest, _option_names(sub), _option_names(sub, value_only=True))
    if dashed is None:
        return None
    return f"No such option: {dashed} (Possible options: {', '.join(_near_options(command, args, dashed))})"


def _reads_as_option(word: str) -> bool:
    """Whether argparse reads ``word`` as an option, not as the value of the option before it: a ``-`` and more,
    unless a negative number (``-1``, ``-.5``) or a word with a blank in it (``"-my run"``)."""
    return (word.startswith("-") and len(word) > 1 and " " not in word
            and re.fullmatch(r"-\d+|-\d*\.\d+", word) is None)


def _misplaced_option(command: Any, args: list[str]) -> str | None:
    """The first option of ``compare`` given before the ``compare`` word, or without it (``msprof-analyze -d X
    -bp Y``: the original's usage without its sub-command), else None."""
    subs = getattr(command, "commands", None)
    if not subs or "compare" not in subs:
        return None
    flags = _option_names(subs["compare"])
    before = args[:args.index("compare")] if "compare" in args else args
    return next((a.split("=", 1)[0] for a in before if a.split("=", 1)[0] in flags), None)


def _typed_cluster(args: list[str], given: str, flags: set[str]) -> str:
    """The argument as typed (its name, before any ``=``) where click names only one letter of an unknown short
    option: it reads "-pb" as the letters -p and -b, and said "No such option: -p", which neither showed what was
    typed nor let ``_near_options`` find -bp for it. The letter may follow help letters, which take no value
    (``-hlep`` is -h, then -l: "No such option: -l", where ``--hlep`` was told of --help), and the name hold ``_``
    or ``-`` (``-enable_api_compare``, ``-help``: "No such option: -e"). ``given`` itself where no argument but a
    known flag (``flags``) holds it so."""
    if len(given) != 2 or given.startswith("--"):
        return given
    helps = "".join(n[1] for n in _CONTEXT["help_option_names"] if len(n) == 2)  # the short flags: h, H
    for arg in args:
        if arg == "--":
            break
        name = arg.split("=", 1)[0]
        if (not arg.startswith("--") and arg not in flags and re.fullmatch(r"-[A-Za-z0-9][\w-]*", name, re.ASCII)
                and name[1:].lstrip(helps).startswith(given[1])):
            return name
    return given


def _flags_of(command: Any, args: list[str]) -> set[str]:
    """The option strings of the command the arguments run (``compare`` for a group); none for a group the
    arguments do not run ``compare`` of."""
    return _option_names(_compare_args(command, args)[0])


def _option_names(command: Any, value_only: bool = False) -> set[str]:
    """The option strings of a click command's parameters (none for None); ``value_only``: of those that take a
    value (no on/off flag), whose next argument click reads as that value."""
    return {o for p in getattr(command, "params", None) or () if not (value_only and getattr(p, "is_flag", False))
            for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}


def _near_options(command: Any, args: list[str], given: str) -> list[str]:
    """The options of the command the arguments run (``compare`` for a group) that an unknown ``given`` may mean
    (``options.close_names``: "-b" for "-bp", "--step" for --base_step and --comparison_step), sorted; [] where
    none is close. A group the arguments run no ``compare`` of offers its own options (``--hlep``: --help)."""
    flags = _flags_of(command, args)
    if not flags and hasattr(command, "commands"):  # a group's own option misspelt (msprof-analyze --hlep)
        flags = _option_names(command)
    return meant_options(given, flags | {"--help"}) if flags and given.startswith("-") else []


def _compare_args(command: Any, args: list[str]) -> tuple[Any, list[str]]:
    """The command the arguments run and its arguments: for a group, ``compare`` and those after its word ((None,
    []) where they run no ``compare`` of it: no option, no argument); else the command and all of them."""
    subs = getattr(command, "commands", None)
    if subs is None:
        return command, args
    if "compare" not in args or "compare" not in subs:
        return None, []
    return subs["compare"], args[args.index("compare") + 1:]


def _stray_arguments(command: Any, args: list[str]) -> list[str]:
    """The arguments of ``compare`` that are neither an option nor an option's value (``msprof-compare BASE
    COMPARISON``: click reports the missing -d before the extra arguments)."""
    command, args = _compare_args(command, args)
    if not getattr(command, "params", None):  # not a click command: nothing to tell options from arguments by
        return []
    takes_value = _option_names(command, value_only=True)
    stray, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            stray.extend(args[i + 1:])
            break
        if arg.startswith("-") and arg != "-":
            i += 2 if arg in takes_value else 1  # "--output_path=x" and flags take no following word
            continue
        stray.append(arg)
        i += 1
    return stray


#: The key of ``execute``'s params under which a face passes its options given more than once (``repeated``).
REPEATED = "_repeated"


def repeated(given: dict[str, list[tuple[str, str]]]) -> list[str]:
    """One warning per option given more than once with different values ({option name: [(option as typed, value),
    ...]}): the parsers keep the last value without a word, as the original's argparse does, so ``-bp run1 ... -bp
    run2`` (a base appended to a command kept in a script) compared run2 while the user may read run1."""
    said = []
    for pairs in given.values():
        values = [str(v) for _, v in pairs]  # the script's --max_kernel_num arrives as an int
        if len(set(values)) > 1:
            typed = " / ".join(dict.fromkeys(o for o, _ in pairs))
            # quoted for the shell, as typed: Python's quotes doubled a path's backslash
            said.append(f"{typed} is given {len(values)} times ({', '.join(term_safe(shell_word(v)) for v in values)}"
                        f"): the last value, {term_safe(shell_word(values[-1]))}, is used")
    return said


#: The options whose value ``clean_path`` reads (a leading "=" dropped): ``-d``, ``-bp``, ``-o``.
_CLEANED_PATHS = frozenset({"comparison_profiling_path", "base_profiling_path", "output_path"})


def _repeated_values(command: Any, args: list[str]) -> list[str]:
    """``repeated`` of the options that take a value in the arguments of ``compare`` (``--name value``,
    ``--name=value``, ``-bp=value``, and a short option with its value attached, ``-oDIR``, as click reads them)."""
    command, args = _compare_args(command, args)
    # a repeatable option (--transparent_op) takes every value given: no repetition to warn of
    names = {o: p.name for p in getattr(command, "params", None) or ()
             if not getattr(p, "is_flag", False) and not getattr(p, "multiple", False) for o in getattr(p, "opts", ())}
    cleaned = {o: names[o] in _CLEANED_PATHS for o in names}  # typer wraps each callback: told by the name
    given: dict[str, list[tuple[str, str]]] = {}
    i = 0
    while i < len(args) and args[i] != "--":
        arg, step, found = args[i], 1, None
        if arg in names:
            step, found = 2, (arg, args[i + 1]) if i + 1 < len(args) else None
        elif "=" in arg and len(arg.split("=", 1)[0]) > 2 and arg.split("=", 1)[0] in names:
            found = tuple(arg.split("=", 1))
        elif not arg.startswith("--") and arg[:2] in names and len(arg) > 2:
            found = (arg[:2], arg[2:])
        if found:
            if cleaned.get(found[0]):  # as the option reads it: "-d=run" is run (clean_path), as is "-d run"
                found = (found[0], clean_path(found[1]) or "")
            given.setdefault(names[found[0]], []).append(found)
        i += step
    return repeated(given)


def analyze_main(args: list[str] | None = None, prog: str = "msprof-analyze") -> None:
    """Entry point of ``msprof-analyze`` (sub-command ``compare``); ``prog`` is the command its messages
    name (``python -m msprof_compare`` when run as a module)."""
    sys.exit(_run_typer(_analyze_app(), args, prog))


def compare_main(args: list[str] | None = None) -> None:
    """Entry point of ``msprof-compare`` (the compare command without the sub-command word)."""
    argv = sys.argv[1:] if args is None else list(args)
    if argv[:1] == ["compare"]:  # msprof-analyze's sub-command word, typed out of habit: the command takes no
        argv = argv[1:]  # positional argument, so the word cannot be anything else
    sys.exit(_run_typer(_compare_app(), argv, "msprof-compare"))


# --------------------------------------------------------------------------- script face


#: Options of the script face that the original's parser does not have.
_SCRIPT_ADDITIONS = frozenset({"--debug", "-H", "--output_format", "--fail_on_regression", "--rank_list",
                               "--version", "--transparent_op"})


def _names_a_path_flag(words: Any) -> bool:
    """Whether one of ``words`` is a path option, its value after ``=`` aside: one of the CLI faces, or the
    script's own positional named as an option (``--base_profiling_path``), the names ``compare()`` tells of too
    (``options.PATH_KEYWORDS``), in any of the spellings an unknown option is told of on the CLI
    (``--benchmark-profiling-path``, ``--bp``): given to the script, those got no word of its paths being
    positional."""
    from .options import PATH_KEYWORDS

    return any(w.startswith("-") and w.split("=", 1)[0].lstrip("-").replace("-", "_") in PATH_KEYWORDS
               for w in words)


class _StoreRepeated(argparse.Action):
    """argparse's store, keeping every value given under ``REPEATED`` ({dest: [(option as typed, value), ...]}) for
    ``repeated``'s warning."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = namespace.__dict__.setdefault(REPEATED, {})
        given.setdefault(self.dest, []).append((option_string or self.dest, values))
        setattr(namespace, self.dest, values)


class _ScriptParser(argparse.ArgumentParser):
    """argparse that reports bad usage as our single ``error:`` line (exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        typed = getattr(self, "given", [])
        message = self._cluster(message, typed)
        given = {t.split("=", 1)[0] for t in message.split()[2:]}  # "--profiling_path=x" is that flag too
        # the word, not a base folder of that name in the working directory (then the paths it gave were read as
        # typed, and "leave out 'compare'" would send the user away from their base)
        word = typed[:1] == ["compare"] and not os.path.exists("compare")
        if word and _names_a_path_flag(typed) and (
                message.startswith(("unrecognized arguments:", "the following arguments are required:"))):
            # msprof-analyze's whole command line ("compare -d C -bp B"): the -d / -bp hint alone left the word in,
            # and "compare -d=C -bp=B" (the word the one positional) read only that an argument is required
            message += (f"; {self.prog} has no sub-command and takes the two paths without -d / -bp: leave out "
                        f"'compare' and give the paths base first: {self.prog} BASE COMPARISON [options]")
        elif (message.startswith("unrecognized arguments:") and _names_a_path_flag(given)) or (
                message.startswith("the following arguments are required:") and _names_a_path_flag(typed)):
            # the command line of msprof-analyze compare given to the script (README: "-d COMPARISON -bp BASE"), or
            # with its paths after "=" ("-d=C -bp=B"), which left no word for the positionals: "required" alone
            message += (f"; {self.prog} takes the two paths without -d / -bp, base first: "
                        f"{self.prog} BASE COMPARISON [options]")
        elif message.startswith("unrecognized arguments:") and word:
            # msprof-analyze's sub-command word, typed out of habit: argparse took it as BASE, BASE as COMPARISON,
            # and named COMPARISON as the argument it did not recognise
            message += (f"; {self.prog} has no sub-command: leave out 'compare' ({self.prog} BASE COMPARISON "
                        "[options])")
        elif message.startswith("unrecognized arguments:"):
            message += self._near(message.split()[2:])
        _error(f"{message} (see '{self.prog} --help')")
        sys.exit(2)

    @staticmethod
    def _cluster(message: str, typed: list[str]) -> str:
        """An unknown word that argparse read as a short flag with more letters after it (``-hlep``: "argument
        -h/-H/--help: ignored explicit argument 'lep'") said unknown as typed, for ``_near`` to name the option meant
        (--help), as the CLI faces and ``--hlep`` are told; ``message`` itself for any other error."""
        found = re.fullmatch(r"argument (\S+): ignored explicit argument '(.*)'", message)
        if found is None:
            return message
        shorts = [o for o in found[1].split("/") if len(o) == 2 and o[1] != "-"]
        word = next((w for w in typed for o in shorts if w == o + found[2]), None)
        return f"unrecognized arguments: {word}" if word else message

    def _near(self, unrecognized: list[str]) -> str:
        """" (Possible options: ...)" naming the options each unknown one of ``unrecognized`` may mean
        (``options.close_names``, as the CLI faces and ``compare()`` name them): argparse named none ("--step"
        got no word of --base_step and --comparison_step); "" where none is close."""
        flags = set(self._option_string_actions)
        unknown = [t.split("=", 1)[0] for t in unrecognized if t.startswith("-") and t.split("=", 1)[0] not in flags]
        near = {t: meant_options(t, flags) for t in dict.fromkeys(unknown)}
        near = {t: n for t, n in near.items() if n}
        if not near:
            return ""
        if len(unknown) == 1:
            return f" (Possible options: {', '.join(near[unknown[0]])})"
        return " (Possible options: " + "; ".join(f"{', '.join(n)} for {t}" for t, n in near.items()) + ")"

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse's, keeping the arguments for ``error``'s hints; a long option typed with one dash
        (``one_dash_name``: ``-output_path x``, which argparse read as ``-o utput_path``) is refused as unknown."""
        self.given = list(sys.argv[1:] if args is None else args)
        takes_value = {o for a in self._actions if a.nargs != 0 for o in a.option_strings}
        dashed = one_dash_name(self.given, set(self._option_string_actions), takes_value)
        if dashed:
            self.error(f"unrecognized arguments: {dashed}")
        return super().parse_known_args(args, namespace)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """argparse's, with a ``%`` of the help texts both faces share taken as it is written ("5 or 5%"): argparse
        reads the help as a %-format (for ``%(default)s``), so --help failed on a lone ``%``."""
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = kwargs["help"].replace("%", "%%")
        return super().add_argument(*args, **kwargs)

    def _get_option_tuples(self, option_string: str) -> list:
        """argparse's prefix matches, where our added options do not make an abbreviation that the
        original's parser took (``--output`` for ``--output_path``, ``--f`` for ``--force``) ambiguous."""
        found = super()._get_option_tuples(option_string)
        theirs = [t for t in found if not _SCRIPT_ADDITIONS.intersection(t[0].option_strings)]
        return theirs if len(theirs) == 1 else found


def build_script_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``performance_compare.py``: BASE then COMPARISON, same options."""
    p = _ScriptParser(prog="performance_compare.py", description=SCRIPT_DESCRIPTION, epilog=SCRIPT_HELP_EPILOG,
                        add_help=False)
    p.add_argument("-h", "-H", "--help", action="help", help="show this help message and exit")  # as the CLI
    # The original's positional help texts are swapped; ours say what each one is.
    p.add_argument("base_profiling_path", type=clean_path, help=HELP["benchmark_profiling_path"])
    p.add_argument("comparison_profiling_path", type=clean_path, help=HELP["profiling_path"])
    for flag in ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
                 "enable_communication_compare", "enable_api_compare", "enable_kernel_compare",
                 "disable_details", "disable_module"):
        p.add_argument(f"--{flag}", action="store_true", help=HELP[flag])
    p.add_argument("-o", "--output_path", action=_StoreRepeated, type=clean_path, default="",
                   help=HELP["output_path"])
    # read as text, its last value made an int in script_main: argparse's type= read every value given, so
    # "--max_kernel_num 5.0 --max_kernel_num 7" was refused where the CLI faces (click) read the last value alone
    p.add_argument("--max_kernel_num", action=_StoreRepeated, default=None, metavar="MAX_KERNEL_NUM",
                   help=HELP["max_kernel_num"])
    p.add_argument("--op_name_map", action=_StoreRepeated, type=str, default="{}", help=HELP["op_name_map"])
    p.add_argument("--transparent_op", action="append", type=str, default=None, metavar="NAME",
                   help=HELP["transparent_op"])
    p.add_argument("--use_input_shape", action="store_true", help=HELP["use_input_shape"])
    p.add_argument("--gpu_flow_cat", action=_StoreRepeated, type=str, default="", help=HELP["gpu_flow_cat"])
    p.add_argument("--base_step", action=_StoreRepeated, type=str, default="", help=HELP["base_step"])
    p.add_argument("--comparison_step", action=_StoreRepeated, type=str, default="", help=HELP["comparison_step"])
    p.add_argument("--force", action="store_true", help=HELP["force"])
    p.add_argument("--use_kernel_type", action="store_true", help=HELP["use_kernel_type"])
    p.add_argument("--debug", action="store_true", help=HELP["debug"])
    p.add_argument("--output_format", action=_StoreRepeated, type=str, default=None, help=HELP["output_format"])
    p.add_argument("--fail_on_regression", action=_StoreRepeated, type=str, default=None, metavar="PCT",
                   help=HELP["fail_on_regression"])
    p.add_argument("--rank_list", action=_StoreRepeated, type=str, default=None, metavar="LIST", help=HELP["rank_list"])
    p.add_argument("--version", action="version", version=version_line(), help=VERSION_HELP)
    return p


def script_main(args: list[str] | None = None) -> int:
    """``python performance_compare.py BASE COMPARISON [options]``; returns the exit status."""
    with run_logging() as log:
        started = time.time()
        parser = build_script_parser()
        params = vars(parser.parse_args(args))
        if params["max_kernel_num"] is not None:  # the last value alone, as every other option and face reads
            try:
                params["max_kernel_num"] = _script_int(params["max_kernel_num"])
            except argparse.ArgumentTypeError as exc:
                parser.error(f"argument --max_kernel_num: {exc}")
        params[REPEATED] = repeated(params.pop(REPEATED, {}))
        code = execute(params, announce_root=False)
        if code == 0:
            elapsed = _dt.timedelta(seconds=time.time() - started)
            log.info("The comparison task has been completed in a total time of %s", elapsed)
        return code


# --------------------------------------------------------------------------- the one run path


def _error(message: str) -> None:
    write_line(f"error: {message}")


def execute(params: dict[str, Any], *, announce_root: bool = True) -> int:
    """Run one comparison from parsed flags; returns the exit status (0, 1, 2, or 3 from --fail_on_regression).

    ``params`` holds the flag values by their internal names
    (``base_profiling_path``, ``comparison_profiling_path``, ``output_path``, ...) and, under ``REPEATED``, the
    face's warnings of options given more than once (``repeated``), logged after the root warning.
    Nothing is written unless both inputs loaded and compared cleanly.
    """
    from .logs import paths_as_typed

    retype = _output_as_typed(params.get("output_path") or ".")
    # warnings and errors name -o as typed; the info lines naming the reports written keep their absolute paths
    with run_logging() as log, paths_as_typed(retype, logging.WARNING), _swallowed_ctrl_c() as interrupted:
        return _execute(log, params, announce_root, retype, interrupted)


@contextlib.contextmanager
def _swallowed_ctrl_c() -> Iterator[Callable[[], None]]:
    """Python cannot raise an exception out of a weakref callback or a ``__del__``: a Ctrl-C landing there (the
    module-lock callback of a library's first import, seen on Python 3.10) was printed as "Exception ignored" with
    a traceback, and the run went on to write its reports. Such a Ctrl-C is kept, silently, and the check this
    yields raises it before anything is written, so the run ends as on any other Ctrl-C: its line and status 130.
    (Raising it again from the hook cannot work: the handler would run inside the hook, and be ignored there.)"""
    previous = sys.unraisablehook
    kept: list[BaseException] = []

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            kept.append(unraisable.exc_value)
        else:
            previous(unraisable)

    def check() -> None:
        if kept:
            raise KeyboardInterrupt

    sys.unraisablehook = hook
    try:
        yield check
    finally:
        sys.unraisablehook = previous


def _import_quietly() -> None:
    """Import the libraries a run needs with Ctrl-C ending the process at once (the entry points do the same
    for the CLI's own import): numpy 1.x turns a KeyboardInterrupt raised while its C modules load into a
    printed traceback and an ImportError, which read as an internal error."""
    from .entry import quit_interrupted

    try:
        quiet = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if quiet:
            signal.signal(signal.SIGINT, quit_interrupted)
    except ValueError:  # not the main thread: leave signals alone
        quiet = False
    try:
        from . import api  # noqa: F401 - numpy and pandas with it
    finally:
        if quiet:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _execute(log: logging.Logger, params: dict[str, Any], announce_root: bool,
             retype: Callable[[str], str], interrupted: Callable[[], None]) -> int:
    _tolerant_stdout()
    params = dict(params)
    debug = bool(params.get("debug"))
    base = comparison = ""
    opts = None  # the run's options, once checked: the out-of-memory estimate counts what they read
    try:
        _import_quietly()  # inside: an import that runs out of memory is reported as such
        if announce_root and hasattr(os, "geteuid") and os.geteuid() == 0:
            log.warning(ROOT_WARNING)
        for said in params.pop(REPEATED, None) or ():
            log.warning(said)
        base = params.pop("base_profiling_path")
        comparison = params.pop("comparison_profiling_path")
        from .loaders.paths import typed_path

        output = typed_path(params.pop("output_path", None) or ".")  # "~" expanded; named as typed (retype)
        rank_list = params.pop("rank_list", None)  # which comparisons run, not how: no option of one comparison
        from .options import build_options, parse_rank_list

        # reference-1 §1.3: the options (rules 1-8) before the output target (rule 10, checked here before the inputs
        # are loaded); compare() validates again and logs the warnings
        opts = build_options(**params)[0]
        from .report import deliver

        formats = opts.formats  # --output_format as the checked options read it, not parsed a second time here
        explicit = params.get("output_format") is not None  # an empty one is refused (options.refuse_empty)
        selected = parse_rank_list(rank_list)  # before any folder is read
        from .loaders.heads import TraceHeads

        heads = TraceHeads()  # the run's: each trace's head is read once, by whichever look comes first
        if _rank_folders(base, comparison, heads):
            return _execute_ranks(log, base, comparison, params, output, formats, explicit, selected, heads,
                                  interrupted)
        if selected is not None:
            _refuse_rank_list(base, comparison, rank_list, bool(params.get("force")))
        deliver.check_target(output, formats, explicit, bool(params.get("force")))  # before the (long) load
        for notice in (deliver.format_mismatch(output, formats, explicit),
                       deliver.folder_notice(output, formats=formats)):
            if notice:
                log.warning(term_safe(notice))
        from .api import cli_compare

        result = cli_compare(base, comparison, params, heads)
        interrupted()
        # With -o - stdout carries the JSON document only: console text goes to stderr.
        with contextlib.redirect_stdout(sys.stderr) if output == deliver.STDOUT else contextlib.nullcontext():
            if result.options.enable_profiling_compare:
                table = result.console_table()
                if table:
                    _print(table)
                    _print(rows_legend(base, comparison))
                    for note in result.summary.get("notes") or ():
                        _print(note)
                    if deliver.writes_workbook(formats, output, explicit) and "OverallMetrics" in result.sheet_names:
                        log.info(overall_hint(output, formats))  # it points at the workbook: only when one is written
            from .report.summary_console import render_communication, render_explain, render_memory

            for text in (render_explain(result.frames, result.verdict), render_communication(result.frames),
                         render_memory(result.frames)):
                if text:
                    _print(text)
        interrupted()
        deliver.write_reports(result, output, explicit_format=explicit)
        return deliver.apply_gate(result)
    except UsageError as exc:
        return _fail(exc, 2, debug, retype)
    except ProfileError as exc:
        return _fail(exc, 1, debug, retype)
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except SystemExit as exc:  # SIGTERM / SIGHUP while a report was written (report.output.Terminated): the
        signum = getattr(exc, "signum", None)  # status stays 128 + N, and the run ends with its line, as on Ctrl-C
        if signum is None:
            raise
        _error(f"terminated ({signal.Signals(signum).name})")
        return int(exc.code)
    except MemoryError as exc:
        if debug:
            traceback.print_exc()
        rank = getattr(exc, "rank", None)  # a rank-by-rank compare's: the budget of that rank's pair
        pair = getattr(exc, "rank_inputs", (base, comparison))
        _error(("" if rank is None else f"{unit_label(rank)}: ") + _out_of_memory(*pair, exc, opts))
        return 1
    except ImportError as exc:
        if not _no_memory_to_import(exc):
            return _internal_error(exc, debug)
        if debug:
            traceback.print_exc()
        _error(_out_of_memory(base, comparison, exc, opts))
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place every other failure is reported
        return _internal_error(exc, debug)


def _rank_folders(base: str, comparison: str, heads: TraceHeads) -> bool:
    """Whether both inputs are folders of ranks (``rank0_ascend_pt``, ..., or one Kineto trace per rank). A rank's
    subfolder refused on the way (it cannot be listed or searched) is named as typed, as discovery's and the
    loaders' errors are (``api._retype``), where this look, made on the absolute paths, named it by its own. An
    empty path (``-bp ""``, ``-d =``) is none: made absolute it was the current folder, whose subfolders' rank
    checks then refused it (run from a folder of node-like folders) before the compare said the path is empty."""
    from .api import _retype, _sides
    from .loaders.paths import TypedPaths, given_path, typed_path
    from .loaders.ranks import rank_inputs

    if not typed_path(base) or not typed_path(comparison):
        return False
    try:
        for given, side in zip((base, comparison), _sides(base, comparison), strict=True):
            with on_side(side):
                if not rank_inputs(given_path(given), heads):
                    return False
        return True
    except ProfileError as exc:
        _retype(exc, TypedPaths(base, comparison).text)
        raise


def _refuse_rank_list(base: str, comparison: str, rank_list: str, force: bool) -> None:
    """``--rank_list`` of a single compare is a usage error: it selects ranks of two folders of ranks. A folder of
    ranks against one profile keeps its own refusal (``api._refuse_rank_folders``), which says what to pass."""
    from .api import _refuse_rank_folders
    from .options import CLI_FACE

    _refuse_rank_folders(base, comparison, CLI_FACE, force)
    raise UsageError(f"--rank_list {short_shell_word(rank_list)} selects ranks of two folders of ranks (-bp and -d, "
                     "or both paths of performance_compare.py, each holding rank0_ascend_pt, ... or one Kineto trace "
                     "per rank); these inputs are one profile each: leave it out")


def _execute_ranks(log: logging.Logger, base: str, comparison: str, params: dict[str, Any], output: str,
                   formats: tuple[str, ...], explicit: bool, rank_list: tuple[int, ...] | None,
                   heads: TraceHeads, interrupted: Callable[[], None]) -> int:
    """Two folders of ranks, compared rank by rank (``api.compare_ranks``): per rank the usual reports, named
    ``performance_comparison_result_rank{R}_{timestamp}``, in the ``-o`` folder, and one line; then a table over
    the ranks and the job's line; the ``--fail_on_regression`` gate judges each rank (3 if any regressed).
    ``heads``: the traces' heads ``_rank_folders`` read, which discovery and the ranks' detection read no more."""
    from .api import rank_pairs
    from .options import CLI_FACE
    from .report import deliver
    from .report.output import REPORT_SUFFIXES, utc_now
    from .report.ranks_console import job_lines, render_ranks, straggler_lines

    if output == deliver.STDOUT:  # a stream holds one document: the ranks' JSONs and the overview are several
        raise UsageError("-o -: two folders of ranks are compared rank by rank, one report per rank, and stdout takes "
                         "one document: pass a folder for them (default: the current one), or give one rank's two "
                         "inputs (-bp <base rank's folder> -d <comparison rank's folder> -o -, or those two folders as "
                         "performance_compare.py's paths) to stream its JSON")
    if output.lower().endswith(REPORT_SUFFIXES) and not os.path.isdir(output):
        raise UsageError(f"-o {output}: two folders of ranks are compared rank by rank, one report per rank: pass "
                         "a folder for them (default: the current one)")
    deliver.check_target(output, formats, explicit, bool(params.get("force")), folder_only=True)  # before the loads
    notice = deliver.folder_notice(output, ranks=True)
    if notice:
        log.warning(term_safe(notice))
    stamp = utc_now().strftime("%Y%m%d%H%M%S")  # one for the job: its reports sort together
    pairs, one_sided = rank_pairs(base, comparison, params, CLI_FACE, rank_list, heads)
    rows: list[tuple[Unit, Any, list[str]]] = []
    gates: list[tuple[Unit, int]] = []
    breakdowns: list[bool] = []
    _compare_ranks(log, pairs, params, output, stamp, explicit, rows, gates, RankNotices(list(pairs.values())), heads,
                   breakdowns, interrupted=interrupted)
    _print(render_ranks(rows))
    if rows and not any(breakdowns):  # a table of report names alone: say why it has no figure
        _print(no_figures([unit for unit, _, _ in rows]))
    # one per cycle of a schedule's cycles, none for a single device's; naming the ranks one folder alone holds
    for line in job_lines(rows, rank_list, one_sided):
        _print(line)
    for line in straggler_lines(rows):
        _print(line)
    try:
        interrupted()
        _write_overview(log, rows, pairs, one_sided, (base, comparison), gates, params, output, stamp, formats,
                        rank_list)
    except _STOPS:  # the overview could not be written (a full disk, Ctrl-C): the rank reports are whole
        _reports_stay(log, rows)
        raise
    return _ranks_gate(gates, params.get("fail_on_regression"), rows)


def _write_overview(log: logging.Logger, rows: list[tuple[Unit, Any, list[str]]],
                    pairs: dict[Unit, tuple[str, str]], one_sided: dict[Unit, tuple[str | None, str | None]],
                    job: tuple[str, str], gates: list[tuple[Unit, int]], params: dict[str, Any], output: str,
                    stamp: str, formats: tuple[str, ...], rank_list: tuple[int, ...] | None = None) -> None:
    """The job overview (``report.ranks_report``) of a complete rank-by-rank compare, beside the rank reports and
    with their timestamp, naming the ranks one folder alone holds (``one_sided``) and those ``--rank_list``
    selected (``rank_list``); its files logged and printed as a rank's are."""
    from .loaders.paths import typed_path
    from .options import parse_regression_pct
    from .report.ranks_report import job_name, overview, write_overview

    job = (typed_path(job[0]), typed_path(job[1]))  # as compare_ranks() records them: "~" expanded
    document = overview(rows, pairs, job, dict(gates), parse_regression_pct(params.get("fail_on_regression")),
                        _stamp_instant(stamp), one_sided, rank_list)
    # the folder holds the rank reports: gone, it is not made again for the overview (output.FolderGone)
    written = write_overview(document, output, stamp, formats, bool(params.get("force")),
                             create=not any(paths for _, _, paths in rows))
    for path in written:
        log.info("The comparison result file has been generated: %s", path)
    _print(f"{job_name(document)} overview: {', '.join(written)}")


def _stamp_instant(stamp: str) -> _dt.datetime:
    """The job's instant its reports' names hold (``%Y%m%d%H%M%S``, UTC): every rank JSON's ``generated_at`` and the
    overview's, so that a file's name and its document state one moment (a rank's JSON said the second it was
    written, minutes after the stamp its name holds)."""
    return _dt.datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=_dt.timezone.utc)


def _compare_ranks(log: logging.Logger, pairs: dict[Unit, tuple[str, str]], params: dict[str, Any], output: str,
                   stamp: str, explicit: bool, rows: list[tuple[Unit, Any, list[str]]],
                   gates: list[tuple[Unit, int]], notices: RankNotices, heads: TraceHeads,
                   breakdowns: list[bool] | None = None, *,
                   interrupted: Callable[[], None]) -> None:
    """The ranks' compares, reports and lines, in rank order, appending to ``rows`` and ``gates`` (and to
    ``breakdowns`` whether each rank's compare made a time breakdown); ``notices`` (``logs.RankNotices``) judges a
    rank's report lines as its compare's (``api.rank_results``)."""
    from .api import rank_results
    from .compare.verdict import export_aside
    from .options import CLI_FACE
    from .report import deliver
    from .report.output import FILE_PREFIX
    from .report.ranks_console import rank_figures, rank_line

    try:
        for rank, result in rank_results(pairs, params, CLI_FACE, notices, heads):
            with notices.of_rank(rank):
                # .json too, by the formats; rank{R}_cycle{k} / cycle{k} for a schedule's cycles
                name = os.path.join(output, f"{FILE_PREFIX}{unit_stem(rank)}_{stamp}.xlsx")
                interrupted()  # a Ctrl-C Python swallowed while this rank compared (_swallowed_ctrl_c)
                # the folder is made for the first reports; gone later, it went with them (output.FolderGone)
                written = deliver.write_reports(result, name, explicit_format=explicit,
                                                create=not any(paths for _, _, paths in rows),
                                                now=_stamp_instant(stamp))
                figures = rank_figures(result)
                rows.append((rank, figures, written))
                if breakdowns is not None:
                    breakdowns.append(result.options.time_breakdown)
                # a text -> DB switch: what the DB side's E2E holds, as a single run's E2E line says it
                _print(rank_line(rank, figures, written, export_aside(result, result.frames.get("e2e"))))
                if result.options.fail_on_regression is not None:  # every line names its rank
                    gates.append((rank, deliver.apply_gate(result, rank)))
            del result  # one rank's result alive at a time: dropped before the next rank loads
    except _STOPS:
        _reports_stay(log, rows)
        raise


#: Under the rank table of a run without a time breakdown (only --enable_communication_compare, say): why it has no
#: E2E time (report names alone, or the communication time) and what makes it. "No time per rank" read as a
#: contradiction under a table of communication times.
NO_FIGURES = ("No E2E time per rank: --enable_profiling_compare (or --fail_on_regression) makes the time "
              "breakdown; the rank reports hold what was compared")


def no_figures(units: list[Unit]) -> str:
    """``NO_FIGURES`` in the words of the job's units (``unit_noun``): a single device's cycles read "per rank" and
    "the rank reports" beside a Cycle table, reports named cycle{k} and a job named by its cycles."""
    noun = unit_noun(units[0]) if units else "rank"
    return NO_FIGURES.replace("per rank", f"per {noun}").replace("the rank reports", f"the {noun} reports")


def _job_within(rows: list[tuple[Unit, Any, list[str]]], pct: Any) -> str:
    """"; the job (slowest rank per side) +20.330 ms, +17.49%, within it" where ranks regressed beyond ``pct`` but the
    job, whose step time its slowest rank sets, did not: text level 0 -> level 1 at 20 % failed for rank 1 (+31.12 %)
    under a job line of +17.49 %, which read as a contradiction. The change in ms beside its percent, as the gate's
    line gives it. "" otherwise, and for a schedule's cycles (a job each)."""
    from fractions import Fraction

    from .compare.gate import change_text, threshold_text
    from .compare.table import ms_places, ms_text
    from .options import parse_regression_pct
    from .report.ranks_console import cycles_of, slowest

    if list(cycles_of(rows)) != [None] or (job := slowest(rows)) is None:
        return ""
    (_, base), (_, comp) = job
    limit = Fraction(threshold_text(parse_regression_pct(pct)))
    if base <= 0 or comp <= 0 or (comp - base) * 100 > limit * base:
        return ""
    diff = ms_text(comp - base, ms_places(base, comp), sign=True)
    return f"; the job (slowest rank per side) {diff} ms, {change_text(comp, base, limit, False)}, within it"


#: What stops a rank-by-rank run after some reports were written: an error, Ctrl-C, SIGTERM.
_STOPS = (ProfileError, UsageError, MemoryError, KeyboardInterrupt, SystemExit)


def _reports_stay(log: logging.Logger, rows: list[tuple[Unit, Any, list[str]]]) -> None:
    """Tell a user whose run stopped which ranks' reports were written whole (and stay): those still there (an
    output folder removed meanwhile took them with it: ``output.FolderGone``)."""
    kept = [r for r, _, paths in rows if all(os.path.isfile(p) for p in paths)]
    if kept:
        log.info("The reports of %s are complete and stay.", named_units(kept))


def _ranks_gate(gates: list[tuple[Unit, int]], pct: Any, rows: list[tuple[Unit, Any, list[str]]] | None = None) -> int:
    """The job's ``--fail_on_regression`` status: 3 naming the ranks that regressed, else 1 naming those that could
    not be judged (no E2E time), else 0. Where the job itself (the slowest rank per side, of ranks without cycles:
    ``rows``) stayed within the threshold and every rank was judged, the line says so."""
    from .report.ranks_report import job_status

    failed = {code: [r for r, c in gates if c == code] for code in (3, 1)}
    # as typed, but the blanks around it ('--fail_on_regression " 5 "' read "--fail_on_regression  5 : rank 0 ...")
    pct = pct.strip() if isinstance(pct, str) else pct
    status = job_status(c for _, c in gates)  # the overview's gate.exit_code
    if status == 3:
        unjudged = f"; {named_units(failed[1])} could not be judged" if failed[1] else ""
        # a rank not judged leaves the job's slowest rank unknown: nothing is said of the job then
        job = "" if failed[1] else _job_within(rows or [], pct)
        _error(f"--fail_on_regression {pct}: {named_units(failed[3])} regressed beyond the threshold{unjudged}{job}")
    elif status == 1:
        _error(f"--fail_on_regression {pct}: {named_units(failed[1])} could not be judged (no E2E time)")
    return status


def _internal_error(exc: BaseException, debug: bool) -> int:
    """An unexpected failure: its message in one line (the traceback with --debug); status 1."""
    if debug:
        traceback.print_exc()
    text = one_line(exc) or type(exc).__name__
    _error(f"internal error: {text}" + ("" if debug else " (run with --debug for the traceback)"))
    return 1


def _tolerant_stdout() -> None:
    """Escape what the console's encoding cannot show (an ASCII or Latin-1 locale, a Windows code page
    when redirected) instead of failing after the compare: names in a profile can be in any script.
    Python already does this for stderr."""
    # "surrogateescape" is what Python picks for the C/POSIX locale without UTF-8 mode (PYTHONUTF8=0): it
    # fails on any non-ASCII name just as "strict" does
    if getattr(sys.stdout, "errors", None) in ("strict", "surrogateescape") and hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass


#: What the dynamic loader says when it cannot map a library (pandas' or numpy's extension modules, imported on
#: first use) for want of memory or address space (``ulimit -v``). Not "cannot allocate memory in static TLS
#: block", which is no shortage of memory.
_IMPORT_OUT_OF_MEMORY = ("failed to map segment from shared object", "cannot map zero-fill pages",
                         "Cannot allocate memory")


def _no_memory_to_import(exc: ImportError) -> bool:
    text = str(exc)
    return "static TLS" not in text and any(m in text for m in _IMPORT_OUT_OF_MEMORY)


def _out_of_memory(base: str, comparison: str, exc: BaseException | None = None, opts: Any = None) -> str:
    """What to tell a user whose machine ran out of memory (the budget rule of the README's "Memory use (RAM)"), naming
    the input being loaded or the folder being written when that is known (``OutOfMemory``). ``opts``: the run's
    options once checked, so an NPU text export counts the side files the run reads, as that rule says."""
    try:  # the loaders (and pandas under them) may be what could not be imported
        from .loaders.pair import input_bytes

        sizes = sorted((input_bytes(base, opts=opts), input_bytes(comparison, opts=opts))) if base and comparison \
            else [0, 0]
    except (MemoryError, ImportError):
        sizes = [0, 0]
    need = (5 * sizes[1] + sizes[0]) / 1e6
    budget = f" (this pair: about {need:,.0f} MB)" if need >= 1 else ""
    advice = ("a comparison needs roughly 5 times the larger input plus the size of the other"
              f"{budget}; free memory, or compare less, e.g. --enable_profiling_compare alone")
    if isinstance(exc, OutOfMemory):
        return f"{term_safe(exc.path)}: out of memory while {exc.doing}{side_named(exc.side)}; {advice}"
    return f"out of memory: {advice}"


def _fail(exc: UsageError | ProfileError, code: int, debug: bool, retype: Callable[[str], str]) -> int:
    """The error's line, ``-o`` named in it as typed (``retype``)."""
    from .api import _retype

    _retype(exc, retype)
    if debug:
        traceback.print_exc()
    if isinstance(exc, ProfileError) and exc.path:  # the file as it is named (a line break in it escaped)
        note = _blank_edges(exc.path) if exc.message == "no such file or directory" and not exc.hint else ""
        hint = one_line(exc.hint or note) if exc.hint or note else None
        rank = f"{unit_label(exc.rank)}: " if exc.rank is not None else ""  # a rank-by-rank compare's
        _error(f"{rank}{term_safe(exc.path)}: {one_line(exc.message)}{exc.closing(hint)}")
    else:
        _error(one_line(exc))
    return code


def _blank_edges(path: str) -> str:
    """What a missing path's line cannot show: that it is only blanks (``-d " "`` read ``error:  : no such file or
    directory``) or starts or ends with one (``-d "run1 "``, a stray space of a copied command). "" otherwise."""
    if not path.strip():
        return f"the path is only whitespace: '{term_safe(path)}'"
    edges = [word for word, char in (("starts", path[0]), ("ends", path[-1])) if char.isspace()]
    return f"the path {' and '.join(edges)} with whitespace: '{term_safe(path)}'" if edges else ""


def _terminal_columns() -> int:
    """The width of the terminal the console text goes to: stdout, or stderr under ``-o -`` (``sys.stdout`` is then
    stderr, and ``shutil.get_terminal_size`` measured the JSON's stream: a file or a pipe, so 80 columns on any
    terminal). ``COLUMNS`` first, as ``shutil``; 0 where the stream is no terminal (a pipe, a file, a closed
    stream)."""
    try:
        if not sys.stdout.isatty():
            return 0
        with contextlib.suppress(ValueError):
            if int(os.environ.get("COLUMNS", "")) > 0:
                return int(os.environ["COLUMNS"])
        return os.get_terminal_size(sys.stdout.fileno()).columns or 80  # 0: a terminal that did not say
    except (AttributeError, ValueError, OSError):
        return 0


def _print(text: str) -> None:
    """Print the console table; a closed stdout (``| head``) must not fail the run, and a stdout that cannot
    be written (a full disk) costs the table, not the reports: said in one warning."""
    from .report.output import closed_pipe, discard_rest

    try:  # the renderers escape names before the layout; this is the net for anything they miss
        text = term_safe(text, keep_newlines=True)
        width = _terminal_columns()
        if width:  # prose wrapped at spaces; a pipe or a file keeps one line per note, for grep
            text = wrap_prose(text, width)
        print(text, flush=True)
    except UnicodeEncodeError as exc:  # an encoding _tolerant_stdout could not change: the table, not the run
        logging.getLogger("msprof-analyze").warning("Cannot print the console tables to standard output: %s",
                                                    exc.reason)
    except OSError as exc:
        if not closed_pipe(exc):
            logging.getLogger("msprof-analyze").warning("Cannot print the console tables to standard output: %s",
                                                        exc.strerror or exc)
        discard_rest(sys.stdout)
