"""What the CLI does after the comparison: write the chosen reports, then apply the CI gate.

``--output_format`` picks xlsx, json or both; ``-o -`` streams the JSON to
stdout (all log and console text then goes to stderr) and writes an xlsx only
when ``--output_format xlsx,json`` asked for one explicitly (into the current
directory; an explicit format without json is a usage error).
``--fail_on_regression PCT`` turns an E2E regression beyond PCT percent into
exit status 3, naming the top contributors on stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..textsafe import term_safe, write_line
from ..units import Unit, unit_label
from .excel import default_file_name, workbook_part, write_workbook
from .json_report import json_part, write_json
from .output import (
    check_room,
    first_free_name,
    names_no_file,
    new_names,
    output_target,
    report_folder_parts,
    utc_now,
    write_new_files,
)

if TYPE_CHECKING:  # pragma: no cover
    from datetime import datetime

    from ..api import CompareResult

log = logging.getLogger("msprof-analyze")

STDOUT = "-"


def check_target(output: str, formats: tuple[str, ...] = ("xlsx",), explicit_format: bool = False,
                 force: bool = False, *, folder_only: bool = False) -> None:
    """Fail on an unusable output target before the (long) load; leaves nothing behind (a folder is probed by
    making and removing a hidden one in it, or in the nearest existing parent of a missing one). Each report the
    formats ask for is checked where it will go (``-o run.json`` puts the workbook at run.xlsx; with
    ``-o -`` an explicitly asked workbook goes into the current directory), and so is the room its file system has
    left (``output.check_room``: a full disk, found here, not after the compare). ``folder_only``: a rank-by-rank
    compare's target, a folder for its reports (``output.output_target``)."""
    if output == STDOUT:
        if explicit_format and "json" not in formats:  # the JSON would go to stdout unasked, the workbook elsewhere
            raise UsageError(f"-o - writes the JSON report to standard output, but --output_format "
                             f"{','.join(formats)} asks for no JSON: use --output_format xlsx,json (the workbook "
                             "then goes into the current directory), or -o DIRECTORY for the workbook alone")
        if sys.stdout is None:
            raise UsageError("-o -: standard output is closed; there is nowhere to write the JSON result")
        if writes_workbook(formats, output, explicit_format):
            _room(output_target(".", ".xlsx", force)[0], ".")
        return
    suffix = next((x for x in (".xlsx", ".json") if output.lower().endswith(x)), "")
    if suffix and names_no_file(os.path.basename(output), suffix) and not os.path.isdir(output):
        # "-o .json": its companion ".xlsx" was a folder when one existed, and the notices named ".json.xlsx"
        raise UsageError(f"-o {term_safe(output)} names no file before {term_safe(output[-len(suffix):])}; give a "
                         f"name such as run{suffix}, or a directory")
    xlsx_target, json_target = _targets(output)
    folders = []
    if "xlsx" in formats:
        folders.append(output_target(xlsx_target, ".xlsx", force, folder_only=folder_only)[0])
    if "json" in formats and not ("xlsx" in formats and json_target == xlsx_target):  # one folder: checked once
        folders.append(output_target(json_target, ".json", force, folder_only=folder_only)[0])
    for folder in dict.fromkeys(folders):
        _room(folder, output)


def _room(folder: str, output: str) -> None:
    """``output.check_room`` of a report's folder (absolute, as ``output_target`` returns it), named as the other
    ``-o`` messages name it: as typed (``-o out``: "out", not its absolute path), a report file's folder as typed
    too, its absolute path after it ("out (/abs/out, the folder of out/run.xlsx)"), the default as "/abs (the
    current directory)"."""
    try:
        typed = os.path.abspath(os.path.expanduser(output)) == folder
    except OSError:  # a working directory deleted meanwhile
        typed = False
    if output in ("", ".", "./"):  # the default (-o "" is it too)
        where, aside = term_safe(folder), "the current directory"
    elif typed:
        where, aside = term_safe(output), ""
    else:
        where, aside = report_folder_parts(folder, output, term_safe(output))
    check_room(folder, where, aside)


def format_mismatch(output: str, formats: tuple[str, ...], explicit_format: bool = False) -> str:
    """The notice for an ``-o`` that names a report of a kind the formats do not write (``-o run.json`` with the
    default xlsx writes run.xlsx, as documented): the user who typed run.json looks for a JSON file. ""
    otherwise, and for a directory that happens to end in .json."""
    low = output.lower()
    named = "json" if low.endswith(".json") else "xlsx" if low.endswith(".xlsx") else ""
    if not named or named in formats or os.path.isdir(output):
        return ""
    written = os.path.splitext(output)[0] + "." + formats[0]
    given = (f"--output_format {','.join(formats)}" if explicit_format
             else f"--output_format is {formats[0]} (the default)")
    return (f"-o {output} names a .{named} file but {given}, so the report is written as {written}; add "
            f"--output_format {named} (or xlsx,json) for the {'JSON report' if named == 'json' else 'workbook'}.")


#: Extensions of files people name reports after; an ``-o`` that ends in one, and does not exist yet, is a
#: folder to the tool (only .xlsx and .json name a report file), which the user did not expect.
_FILE_LIKE = (".csv", ".tsv", ".txt", ".xls", ".html", ".htm", ".pdf", ".md", ".log",
              # a compressed or other spreadsheet / JSON-lines report (-o report.json.gz) is no report name either
              ".gz", ".zip", ".bz2", ".xz", ".xlsm", ".ods", ".jsonl", ".ndjson", ".yaml", ".yml")


def taken_as_folder(output: str) -> bool:
    """Whether ``output`` (not there yet) ends like a file of another kind, ``results.csv``, and so becomes a folder
    holding the report. A ``~`` is expanded, as ``output_target`` does: an API caller's ``~/results.csv`` was
    looked for under that name and said to be created on every call. A report's own name with a trailing
    separator (``run.xlsx/``) counts too: the ``/`` makes it a folder, which was made without a word."""
    return (output != STDOUT and (output.lower().endswith(_FILE_LIKE) or _report_name_as_folder(output))
            and not os.path.lexists(os.path.expanduser(output)))


def _report_name_as_folder(output: str) -> bool:
    """Whether ``output`` is a report file's name followed by a separator: ``run.xlsx/``, ``run.json/``. Not a
    folder named as the extension alone (``.xlsx/``): without the '/' it names no file, which ``-o`` refuses, so the
    notice's advice to drop the '/' led to that refusal."""
    stem = output.rstrip("/" + os.sep)
    suffix = next((x for x in (".xlsx", ".json") if stem.lower().endswith(x)), "")
    return stem != output and bool(suffix) and not names_no_file(os.path.basename(stem), suffix)


def _extension_folder(output: str) -> str:
    """The folder name of an ``output`` that names a folder by a report's extension alone, not there yet:
    ``.xlsx/``, ``..json/`` (``-o .xlsx`` names no file and is refused, so the '/' is how such a folder comes
    about); "" otherwise. Its name starts with a dot, so the folder made is hidden: the reports went where a
    listing does not show them, without a word (session 69's leftover)."""
    stem = output.rstrip("/" + os.sep)
    suffix = next((x for x in (".xlsx", ".json") if stem.lower().endswith(x)), "")
    name = os.path.basename(stem)
    if stem == output or not suffix or not names_no_file(name, suffix) or os.path.lexists(os.path.expanduser(stem)):
        return ""
    return name


def _slash_advice(output: str, what: str, formats: tuple[str, ...] | None = None) -> str:
    """How to name the file itself where ``output`` is one's name with a trailing separator (``run.xlsx/``).
    ``formats``: the CLI run's; where they hold not the typed extension the name advised takes the run's (``-o
    run.xlsx/ --output_format json``: run.xlsx then drew ``format_mismatch``'s "written as run.json")."""
    stem = output.rstrip("/" + os.sep)
    typed = stem[-4:].lower()  # xlsx or json (``_report_name_as_folder``)
    if formats and typed not in formats:
        made = "a JSON report" if formats[0] == "json" else "a workbook"
        return (f"its trailing '/' makes it a folder, and this run writes {made}: write {term_safe(stem[:-4])}"
                f"{formats[0]} to name the {what} itself")
    return f"its trailing '/' makes it a folder; write {term_safe(stem)} without it to name the {what} itself"


def blank_edged(output: str) -> str:
    """What the notice of a name in ``output`` that starts or ends with whitespace and is not there yet says of it
    (``"the name 'out ' ends with whitespace"``), so writing creates it blank included; "" otherwise. ``-o "out "``
    (a stray blank of a copied command) made a folder ``out `` without a word, where an input path of such an edge
    gets a hint once it is missing (``cli._blank_edges``). A name of whitespace alone is refused
    (``output.output_target``); an existing name is the user's. A ``~`` is expanded, as ``output_target`` does."""
    if output == STDOUT:
        return ""
    for part in new_names(output):
        if part.strip() and part != part.strip():
            edges = [word for word, char in (("starts", part[0]), ("ends", part[-1])) if char.isspace()]
            return f"the name '{term_safe(part)}' {' and '.join(edges)} with whitespace"
    return ""


def folder_notice(output: str, ranks: bool = False, formats: tuple[str, ...] = ("xlsx",)) -> str:
    """The notice for ``-o results.csv`` (not there yet): it becomes a folder holding the report; for ``-o "out "``:
    the name is created with its blank (``blank_edged``). "" otherwise. ``ranks``: a rank-by-rank compare, whose
    ``-o`` is a folder for its reports: the advice to name a report file (``run.xlsx``, ``x.xlsx`` without its
    '/', an ``-o`` ending in .xlsx) led to its refusal ("pass a folder for them"), so the folder alone is said.
    ``formats``: the run's (``--output_format``), whose report the advice for ``.xlsx/`` and for ``results.csv``
    names: ``run.xlsx`` beside ``--output_format json`` then warned that the report is written as run.json
    (``format_mismatch``)."""
    blank = blank_edged(output)
    if blank:
        return (f"-o '{term_safe(output)}': {blank} and is created so; leave the whitespace out if it was not "
                "meant.")
    hidden = _extension_folder(output)
    if not (hidden or taken_as_folder(output)):
        return ""
    reports = "the rank reports go into it" if ranks else "the report goes into it"
    if hidden:
        typed = hidden[-4:].lower()
        advice = (f"give a name before the extension (run.{typed}) to name the report file itself." if typed in formats
                  else f"give the report file a name with its extension (run.{formats[0]}: this run writes "
                  f"{'a JSON report' if formats[0] == 'json' else 'a workbook'}) to name it itself.")
        return (f"-o {term_safe(output)} is taken as a folder (created) named '{term_safe(hidden)}', hidden as its "
                f"name starts with a dot, and {reports}; " + (
                    "give the folder a name that does not start with a dot to see it listed." if ranks else advice))
    if ranks:  # a folder is what a rank-by-rank compare writes to: no file to name instead
        return f"-o {output} is taken as a folder (created) and {reports}, one per rank."
    if _report_name_as_folder(output):
        return (f"-o {output} is taken as a folder (created) and the report goes into it: "
                f"{_slash_advice(output, 'file', formats)}.")
    if len(formats) == 1:  # -o run.json under the default xlsx was then written as run.xlsx (format_mismatch)
        made = "a JSON report" if formats[0] == "json" else "a workbook"
        return (f"-o {output} is taken as a folder (created) and the report goes into it: this run writes {made}; "
                f"end -o in .{formats[0]} to name the file itself.")
    return (f"-o {output} is taken as a folder (created) and the report goes into it: the reports are .xlsx and "
            ".json files; end -o in .xlsx or .json to name the file itself.")


def api_folder_notice(target: object, suffix: str) -> str:
    """``folder_notice`` for the API's ``to_excel`` / ``to_json`` target (``suffix``: the report's), which names
    no ``-o``; "" for a target of another type (``output_target`` refuses it)."""
    if not isinstance(target, (str, bytes, os.PathLike)):
        return ""
    try:
        output = os.fsdecode(target)
    except TypeError:  # a PathLike that returns neither str nor bytes
        return ""
    blank = blank_edged(output)
    if blank:
        return f"output '{term_safe(output)}': {blank} and is created so; leave the whitespace out if it was not meant."
    hidden = _extension_folder(output)
    if hidden:
        return (f"output {term_safe(output)} is taken as a folder (created) named '{term_safe(hidden)}', hidden as "
                f"its name starts with a dot, and the report goes into it; give a name before {suffix} "
                f"(run{suffix}) to name the report file itself.")
    if not taken_as_folder(output):
        return ""
    if _report_name_as_folder(output):
        return (f"output {output} is taken as a folder (created) and the report goes into it: "
                f"{_slash_advice(output, 'file')}.")
    return (f"output {output} is taken as a folder (created) and the report goes into it: the report is a "
            f"{suffix} file; end the path in {suffix} to name the file itself.")


def api_report_file(target: object, suffix: str) -> tuple[object, str]:
    """The API's ``to_excel`` / ``to_json`` ``target`` (``suffix``: the report's) where it names the other report's
    file: that file's stem with ``suffix``, as the CLI's ``-o run.json`` writes run.xlsx (``_targets``), and the
    notice that says so; else ``target`` as given and "". ``to_excel("run.json")`` was refused while the CLI wrote
    run.xlsx, so one path could not serve a script's ``to_excel(p)`` and ``to_json(p)`` as it serves ``-o``."""
    other = ".json" if suffix == ".xlsx" else ".xlsx"
    if not isinstance(target, (str, bytes, os.PathLike)):
        return target, ""
    try:
        output = os.fsdecode(target)
    except TypeError:  # a PathLike that returns neither str nor bytes: refused by the writer
        return target, ""
    if not output.lower().endswith(other) or os.path.isdir(output) or names_no_file(os.path.basename(output), other):
        return target, ""  # a folder named run.json is a folder; ".json" alone is refused as no file name
    xlsx, json_target = _targets(output)
    written, report = (xlsx, "workbook") if suffix == ".xlsx" else (json_target, "JSON report")
    method, kind = ("to_excel", "to_json writes the JSON report") if suffix == ".xlsx" else \
        ("to_json", "to_excel writes the workbook")
    return written, (f"{method}: {term_safe(output)} names a {other} file, so the {report} is written as "
                     f"{term_safe(written)}; {kind}.")


def _targets(output: str) -> tuple[str, str]:
    """(xlsx target, json target) for one ``--output_path``: a directory, or a file of either kind."""
    low = output.lower()
    if os.path.isdir(output):
        return output, output
    if low.endswith(".xlsx"):
        return output, _companion(output[:-5] + ".json")
    if low.endswith(".json"):
        return _companion(output[:-5] + ".xlsx"), output
    return output, output


def _companion(path: str) -> str:
    """The other report's file beside the one ``-o`` names: the same stem, and where a directory holds that
    name, the first free ``_N`` name, as for any taken name (the report went into that directory under its
    default name, away from the file named). A symbolic link stays, to be refused as any linked target."""
    if not os.path.isdir(path) or os.path.islink(path):
        return path
    return os.path.join(os.path.dirname(path), first_free_name(os.path.dirname(path) or ".", os.path.basename(path)))


def writes_workbook(formats: tuple[str, ...], output: str, explicit_format: bool = False) -> bool:
    """Whether ``write_reports`` writes an xlsx for these formats and target (with ``-o -`` only when
    the format was asked for explicitly); it writes one only when some sheet has rows."""
    return "xlsx" in formats and (output != STDOUT or explicit_format)


def workbook_name(output: str, formats: tuple[str, ...]) -> str:
    """The file name the workbook of ``-o output`` will be published under ("" where ``output`` is a folder, and
    the default name is taken): the first free ``_N`` form of the name, free for the JSON too where both are
    written (``write_reports`` gives them one stem). The hint that pointed at the workbook named run.xlsx of
    ``-o run.xlsx --output_format xlsx,json`` beside an older run.json alone, while run_1.xlsx was written."""
    if output == STDOUT:
        return ""
    xlsx_target, json_target = _targets(output)
    if os.path.isdir(xlsx_target) or not xlsx_target.lower().endswith(".xlsx"):
        return ""
    directory, name = os.path.dirname(xlsx_target) or ".", os.path.basename(xlsx_target)
    also = ()
    if "json" in formats and json_target != xlsx_target:
        also = (os.path.splitext(json_target)[1],)
    return first_free_name(directory, name, *also)


def write_reports(result: CompareResult, output: str, explicit_format: bool = False, *,
                  create: bool = True, now: datetime | None = None) -> list[str]:
    """Write the reports ``result.options.output_format`` names; returns what was written ("-" = stdout).
    One run has one timestamp: the clock is read once, for the default names and the JSON's ``generated_at``;
    ``now``: that instant where the caller read it (a rank-by-rank job's, whose reports' names hold its stamp).
    ``create`` False: a missing folder is not made (``output.write_new_files``: a rank's reports beside earlier
    ranks'). A file written alone is announced in the log as soon as it is published, so a later report's failure
    does not hide an earlier one that is there; the workbook and JSON of one run are published together
    (``write_new_files``: both or neither), so both are announced after the pair is in place."""
    formats = result.options.formats
    written: list[str] = []
    now = now or utc_now()
    if output == STDOUT:
        if writes_workbook(formats, output, explicit_format):
            _generated(written, write_workbook(result, ".", now))
        written.append(write_json(result, STDOUT, now=now))
        return written
    xlsx_target, json_target = _targets(output)
    workbook = workbook_part(result) if "xlsx" in formats and "json" in formats else None
    if workbook is not None:
        # one name for both files: the same stem (and timestamp), with a _N suffix free for both, taken
        # for both at once (a run publishing into the same directory meanwhile cannot split the pair)
        directory, name = output_target(xlsx_target, ".xlsx", result.options.force)
        # the same target (a folder) names no file and was just checked for the workbook; a .json name beside a
        # .xlsx one is checked for itself (a symbolic link, a free name too long)
        json_name = None if json_target == xlsx_target else output_target(json_target, ".json",
                                                                           result.options.force)[1]
        stem = os.path.splitext(name or default_file_name(now))[0]
        # a named file keeps its extension as written (-o run.XLSX: run.XLSX, as with the workbook alone)
        parts = [(os.path.splitext(n)[1] if n else part[0], *part[1:])
                 for n, part in ((name, workbook), (json_name, json_part(result, generated_at=now)))]
        for path in write_new_files(directory, stem, parts, create=create):
            _generated(written, path)
        return written
    if "xlsx" in formats:
        _generated(written, write_workbook(result, xlsx_target, now, create=create))
    if "json" in formats:
        _generated(written, write_json(result, json_target, now=now, create=create))
    return written


def _generated(written: list[str], path: str) -> None:
    """Add a published report's ``path`` to ``written`` with the original's log line; "" (no workbook: no sheet
    has rows) is neither."""
    if path:
        written.append(path)
        log.info("The comparison result file has been generated: %s", path)


def apply_gate(result: CompareResult, unit: Unit | None = None) -> int:
    """0; 3 with the regression and its top contributors written to stderr; 1 when a side has no E2E time. ``unit``:
    a rank-by-rank compare's (``units.Unit``), named first on every line written to stderr (the steps and
    contributors under "rank 1: Performance regression" read as no rank's, or the rank before's, and a grep of a CI
    log for "rank 1:" lost them) and on the first line logged (``logs.RankNotices`` names it on the others)."""
    pct = result.options.fail_on_regression
    if pct is None:
        return 0
    from ..api import judge_regression
    from ..options import CLI_FACE

    code, message = judge_regression(result, pct, CLI_FACE)
    if unit is not None:
        label = f"{unit_label(unit)}: "
        error = "error: " if message.startswith("error: ") else ""
        text = label + message.removeprefix("error: ")
        message = error + text.replace("\n", "\n" + label) if code else text
    if code:
        write_line(message, keep_newlines=True)  # a closed or full stderr must not turn status 3 into 1
    else:
        for line in message.split("\n"):  # a line each: the log escapes a line break ("No regression: ...\nMost ...")
            log.info(line)
    return code
