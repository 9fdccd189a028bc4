"""The JSON reporter: ``performance_comparison_result_<UTC>.json`` (or stdout with ``-o -``).

One document holds every sheet (records keyed by display header, as pandas
reads the xlsx: repeated headers get ``.1``), the console summary and the
Summary results (E2E, waterfall, contributors, validity guards, where communication and memory grew). The
layout is described by ``msprof_compare/schemas/result.schema.json``. The JSON is strict: NaN becomes
``null`` and infinities the strings ``"INF"`` / ``"-INF"``, as in the xlsx.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import json
import math
import numbers
import os
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

import msgspec
import numpy as np
import pandas as pd

from ..compare import memory_summary
from ..compare.module_contributors import module_contributors_note, module_lead_lines, outside_modules_note
from ..compare.summary_notes import contributors_note_lines, net_of_communication, unexplained_note
from ..compare.verdict import verdict_sentences
from ..errors import ProfileError
from ..model import Profile, framework_label
from ..options import CLI_FACE, Face
from .output import Part, closed_pipe, default_name, discard_rest, output_target, utc_now, write_new_file

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult
    from ..compare.table import Sheet

SCHEMA_ID = "urn:msprof-compare:result-schema:3"
#: 2: the document records the regression gate's verdict and reasons (``gate``); 1 had no such key. 3: every text of
#: ``summary`` is one line: ``verdict`` holds its first sentence, the idle stretch's sentence that followed a line
#: break there is ``verdict_idle_note``, and the notes the console and the Summary sheet give in several lines are
#: ``contributors_note_lines`` / ``module_contributors_note_lines`` too (their one-line keys unchanged)
SCHEMA_VERSION = 3
#: Frames of ``result.frames`` placed under "summary" (the rest go to "frames").
SUMMARY_FRAMES = ("waterfall", "contributors", "module_contributors", "guards", "communication_contributors",
                  "memory_contributors")
#: One-row frames placed under "summary" as objects (``_e2e``, ``communication_totals``, ``memory_totals``), not
#: under "frames".
SUMMARY_OBJECTS = ("e2e", "communication", "memory")


def clean(v: Any) -> Any:
    """One cell as strict JSON: NaN/NA -> None, +-inf -> "INF"/"-INF", numpy scalars -> Python (``numpy.str_``
    and other str subclasses too: msgspec, ``dumps``'s encoder, takes no type but str)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, str):
        return v if type(v) is str else str.__str__(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "INF" if f > 0 else "-INF"
        return f
    if isinstance(v, dict):
        return {str(k): clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [clean(x) for x in v]
    return str(v)


def records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    """A frame as a list of row objects (column order kept, cells cleaned)."""
    if frame is None or not len(frame.columns):
        return []
    names = [str(c) for c in frame.columns]
    cols = [[clean(v) for v in col.tolist()] for _, col in frame.items()]  # items(): iloc[:, j] cost ~40 us a column
    return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)] if cols else []


def _profile(p: Any) -> dict[str, Any]:
    """A side's record: ``framework`` tells a MindSpore export from a torch_npu one (``kind`` and ``source`` are
    "NPU" / "ascend_text" for both), null where nothing tells (``framework_label``) or ``p`` is no loaded profile
    (the least object ``to_document`` takes has the four other fields alone)."""
    return {"path": str(p.path), "kind": str(p.kind), "source": str(p.source), "level": str(p.level or ""),
            "framework": (framework_label(p) or None) if isinstance(p, Profile) else None}


def _options(opts: Any) -> dict[str, Any]:
    from dataclasses import fields

    return {f.name: clean(getattr(opts, f.name)) for f in fields(opts)}


def _e2e(frames: dict[str, pd.DataFrame]) -> dict[str, Any] | None:
    e2e = frames.get("e2e")
    if e2e is None or not len(e2e):
        return None
    return change(int(e2e["base_ns"].iloc[0]), int(e2e["comparison_ns"].iloc[0]))


def change(base: int, comp: int, zero_known: bool = False) -> dict[str, Any]:
    """Two whole-ns times and their change, in ns (exact) and ms. A side without E2E time (0) has an unknown one,
    not a zero one: no change can be stated (a -100 % there read as a run that took no time); ``zero_known`` for a
    time that may truly be 0 (Free, Uncovered Communication), whose change is stated, its percent only on a base
    above 0."""
    diff = comp - base if zero_known or (base and comp) else None
    return {
        "base_ns": base, "comparison_ns": comp, "diff_ns": diff,
        "base_ms": base / 1e6, "comparison_ms": comp / 1e6, "diff_ms": None if diff is None else diff / 1e6,
        "diff_pct": None if diff is None or not base else clean(diff / base * 100.0),
    }


def _totals(frames: dict[str, pd.DataFrame], name: str) -> dict[str, Any] | None:
    """The one-row frame ``name`` as an object; None without it."""
    totals = frames.get(name)
    return records(totals)[0] if totals is not None and len(totals) else None


def memory_totals(frames: dict[str, pd.DataFrame]) -> dict[str, Any] | None:
    """The one-row frame "memory" (``compare/memory_summary.py``) as an object; None without it. With
    ``peak_whole_profile``: the sides whose peak is the whole profile's beside a step's operators (text exports
    given a step: memory_record.csv ignores it), as the console's memory line says; ``operators_left_out``: why the
    operators' memory is not compared where the memory sheets were left out (a side without framework ops), the
    peaks alone then; else null; ``peak_zero``: per side whose 0 peak is the largest of readings that are all 0,
    the console's words for them ({"comparison": "its 20 MEMORY_RECORD totalReserved readings are all 0"}), so that
    no reader takes that 0 for an empty device; empty otherwise; ``peak_app``: where a text export's peak counts
    memory_record.csv's APP component (the whole process) beside a DB export or a GPU trace, whose peaks hold no
    such component, that side, its peak without APP and the other side's kind ("db", "gpu"), as the console's
    memory line says it; else null; ``drill_left_out``: where the max_kernel_num drill-down left out 0.01 MB or
    more a side (what an op it opens allocates outside the ops inside it), the MB left out and each side's MB
    without the drill-down; else null."""
    out = _totals(frames, "memory")
    if out is not None:
        attrs = frames["memory"].attrs
        out["peak_whole_profile"] = list(attrs.get("peak_whole_profile") or [])
        out["operators_left_out"] = attrs.get("operators_left_out")
        out["peak_zero"] = dict(attrs.get("peak_zero") or {})
        app = attrs.get("peak_app")
        out["peak_app"] = None if not app else {"side": app[0], "peak_without_app_gb": app[1], "beside": app[2]}
        drilled = attrs.get("drill_left_out")
        out["drill_left_out"] = None if not drilled else dict(zip(
            ("base_mb", "comparison_mb", "base_mb_undrilled", "comparison_mb_undrilled"), drilled, strict=True))
    return out


def gate_record(result: CompareResult, face: Face = CLI_FACE) -> dict[str, Any] | None:
    """The ``fail_on_regression`` gate's verdict and reasons, as the CLI states them after writing the reports
    (None where no gate was asked): a CI job that keeps the JSON could read the exit code only, and the reasons
    from stderr. ``regressed`` is the ranks overview's word: true (exit 3), false (0), null (1: no E2E time).
    ``diff_ns`` / ``diff_ms``: the E2E change judged (``change``'s), null where the gate could not judge (exit 1).
    The record is ``RegressionGate.to_dict()``, so that ``regression_gate()``'s attributes are these keys.
    The lines name the options as ``face`` takes them: a document ``to_json`` writes names the keyword argument
    the caller gave ``compare()`` (``fail_on_regression``), not the CLI's flag."""
    pct = result.options.fail_on_regression
    if pct is None:
        return None
    from ..api import judge_regression

    return clean(judge_regression(result, pct, face, method=False).to_dict())


def communication_totals(frames: dict[str, pd.DataFrame]) -> dict[str, Any] | None:
    """The one-row frame "communication" (``compare/communication_summary.py``) as an object; None without it."""
    return _totals(frames, "communication")


def to_document(result: CompareResult, generated_at: _dt.datetime | None = None,
                face: Face = CLI_FACE, *, pieces: bool = False) -> dict[str, Any]:
    """The whole result as a JSON-ready dict (see schemas/result.schema.json); ``face``: how its gate lines name the
    options (``gate_record``). ``pieces``: the sheets and the frames are left to be made as ``write_document_file``
    writes them (a sheet's record as a ``functools.partial``, ``_Rows``), a sheet and ``PIECE_ROWS`` rows at a
    time, not held whole."""
    now = generated_at or utc_now()
    frames = result.frames or {}
    summary = result.summary
    return {
        **document_head(SCHEMA_ID, SCHEMA_VERSION, now),
        "base": _profile(result.base),
        "comparison": _profile(result.comparison),
        "options": _options(result.options),
        "gate": gate_record(result, face),
        "console_summary": None if not summary else {
            "title": str(summary.get("title") or ""),
            "headers": [str(h) for h in summary.get("headers") or []],
            "rows": [[clean(c) for c in row] for row in summary.get("rows") or []],
            "notes": [str(n) for n in summary.get("notes") or []],
        },
        "summary": _summary(frames, result.verdict),
        "sheets": [partial(_sheet, s, pieces) if pieces else _sheet(s) for s in result.sheets if len(s)],
        "frames": {name: _Rows(f) if pieces else records(f) for name, f in frames.items()
                   if name not in SUMMARY_FRAMES and name not in SUMMARY_OBJECTS and isinstance(f, pd.DataFrame)},
    }


def _summary(frames: dict[str, pd.DataFrame], verdict: str) -> dict[str, Any]:
    """The document's ``summary``: the Summary results (``SUMMARY_FRAMES`` as records, ``SUMMARY_OBJECTS`` as
    objects) with the notes and the verdict the console and the Summary sheet print under them. No text holds a
    line break: the verdict's two sentences are two keys, and each note the console breaks into lines is also a
    list of those lines (``note_lines``)."""
    contrib, modules = frames.get("contributors"), frames.get("module_contributors")
    first, idle = verdict_sentences(verdict or "")
    return {
        "e2e": _e2e(frames),
        **{name: records(frames.get(name)) for name in SUMMARY_FRAMES},
        "contributors_note": unexplained_note(contrib, frames.get("waterfall"),
                                             frames.get("contributor_communication")) or None,
        "contributors_note_lines": note_lines(frames),
        "contributors_net_of_communication": [  # the operators the note names net of communication
            {"name": n, "diff_ms": ms}
            for n, ms in net_of_communication(contrib, frames.get("contributor_communication"))] or None,
        "module_contributors_note": module_contributors_note(modules) or None,
        "module_contributors_note_lines": module_lead_lines(modules),
        "outside_modules_note": outside_modules_note(contrib, modules) or None,
        "verdict": first or None,
        "verdict_idle_note": idle or None,
        "communication": communication_totals(frames),
        "memory": memory_totals(frames),
        "memory_contributors_note": memory_summary.contributors_note(frames.get("memory_contributors")) or None,
    }


def note_lines(frames: dict[str, pd.DataFrame]) -> list[str]:
    """The note under the contributors as the console prints it and the Summary sheet writes it, a line (a row) per
    sentence or wrapper ("Note: ...", "  - base ...", ...): its one line (``contributors_note``) was 729 characters
    on reference pair 4. [] without a note, and without contributors (the console prints none then)."""
    contrib = frames.get("contributors")
    if contrib is None or not len(contrib):
        return []
    return contributors_note_lines(contrib, frames.get("waterfall"), frames.get("contributor_communication"))


def _sheet(s: Sheet, pieces: bool = False) -> dict[str, Any]:
    """One sheet of the workbook as the document's record: its headers, the columns as pandas reads them (repeated
    headers suffixed ``.1``), the two halves' spans and the rows (``pieces``: to be made as they are written)."""
    f = s.labelled()  # whole numbers stay whole (frame() reads a number column with blanks as float)
    return {
        "name": s.name,
        "headers": list(s.headers),
        "columns": [str(c) for c in f.columns],
        "base_span": list(s.base_span),
        "comparison_span": list(s.comparison_span),
        "rows": _Rows(f) if pieces else records(f),
    }


class _Rows:
    """A frame's ``records``, made ``PIECE_ROWS`` rows at a time as ``write_document_file`` writes them: the
    records of a whole sheet (dicts of Python objects, several times its frame) were the JSON stage's peak."""

    __slots__ = ("frame",)

    def __init__(self, frame: pd.DataFrame | None) -> None:
        self.frame = frame

    def __len__(self) -> int:
        f = self.frame
        return 0 if f is None or not len(f.columns) else len(f)

    def piece(self, at: int, end: int) -> list[dict[str, Any]]:
        """The records of rows ``at`` to ``end`` (those of ``records(frame)[at:end]``)."""
        f = self.frame
        return records(None if f is None else f.iloc[at:end])


def _whole(value: Any) -> Any:
    """A document of ``to_document(..., pieces=True)`` with its sheets' partials and ``_Rows`` made (``json``'s
    text)."""
    if value.__class__ is partial:
        return _whole(value())
    if value.__class__ is _Rows:
        return value.piece(0, len(value))
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def document_head(schema_id: str, version: int, now: _dt.datetime) -> dict[str, Any]:
    """The keys a JSON document of the tool starts with, a result's (``to_document``) or a job's (the ranks
    overview): its schema, the schema's version (each document's own), the tool and when it was made (UTC, to the
    second)."""
    return {
        "$schema": schema_id,
        "schema_version": version,
        "tool": {"name": "msprof-compare", "version": _version()},
        "generated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _version() -> str:
    """The running package's version (an installed distribution's metadata may be another checkout's)."""
    from .. import __version__

    return __version__


def dumps(result: CompareResult, ascii_only: bool = False, generated_at: _dt.datetime | None = None,
          face: Face = CLI_FACE) -> str:
    """The result as strict JSON text, indented by one space.

    Every cell went through ``clean`` (no NaN or infinity is left), so msgspec's encoder, which would write a
    stray NaN as ``null`` where ``json`` refuses it, gives the same document ~8x faster than ``json.dumps``
    with ``indent`` (1.74 -> 0.22 s for the 79 MB document of a 340 MB GPU pair); it writes exponents as
    ``1e-6`` where ``json`` writes ``1e-06``. It neither escapes non-ASCII text nor takes lone surrogates:
    ``ascii_only`` (a console that cannot print the text) and such documents keep ``json``."""
    return document_text(to_document(result, generated_at, face), ascii_only)


def document_text(document: dict[str, Any], ascii_only: bool = False) -> str:
    """A JSON-ready dict as ``dumps`` writes it (msgspec, ``json`` for what msgspec does not take)."""
    if not ascii_only:
        try:
            return msgspec.json.format(msgspec.json.encode(document), indent=1).decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a non-UTF-8 byte of a path): json keeps it as before
            pass
    return json.dumps(document, ensure_ascii=ascii_only, allow_nan=False, indent=1)


#: Rows of a long list formatted as one piece by ``write_document_file`` (~1-2 MB of a sheet's rows).
PIECE_ROWS = 4096


def write_document_file(tmp: str, document: dict[str, Any]) -> None:
    """``document_text``'s text and its final line break into ``tmp``, formatted and written a piece at a time:
    the outer objects key by key, short lists item by item, and long ones ``PIECE_ROWS`` items a piece, each
    piece's lines indented to its depth. The whole text at once held the compact bytes, the formatted bytes and a
    decoded str (with the write's encoded copy) of a document that was 305 MB on the 2 x 516 MB DB pair. The lines
    get the platform's line breaks, as a text file's write gives them (JSON strings hold none: they are escaped). A
    document msgspec refuses (a lone surrogate) is written again as ``json``'s text, as before."""
    with open(tmp, "wb") as fh:
        eol = os.linesep.encode()

        def put(data: bytes) -> None:
            fh.write(data if eol == b"\n" else data.replace(b"\n", eol))

        try:
            _write_value(put, document, 0)
            put(b"\n")
            return
        except UnicodeEncodeError:
            pass
    write_document(tmp, json.dumps(_whole(document), ensure_ascii=False, allow_nan=False, indent=1))


def _write_value(put: Any, value: Any, depth: int) -> None:
    """One value of ``write_document_file`` at ``depth``, as ``msgspec.json.format(..., indent=1)`` writes it
    there. A sheet's partial is made here; a ``_Rows`` is made here too, a piece at a time where it is long."""
    if value.__class__ is partial:
        value = value()
    if value.__class__ is _Rows and len(value) <= PIECE_ROWS:
        value = value.piece(0, len(value))
    pad = b"\n" + b" " * depth
    if value and depth < 3 and (isinstance(value, dict) or isinstance(value, list) and len(value) <= PIECE_ROWS):
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        put(b"{" if isinstance(value, dict) else b"[")
        for i, (key, item) in enumerate(items):
            put((b"," if i else b"") + pad + b" " + (b"" if key is None else msgspec.json.encode(key) + b": "))
            _write_value(put, item, depth + 1)
        put(pad + (b"}" if isinstance(value, dict) else b"]"))
    elif isinstance(value, (list, _Rows)) and len(value) > PIECE_ROWS:
        if value.__class__ is _Rows:
            cut = value.piece
        elif any(v.__class__ is partial or v.__class__ is _Rows for v in value):  # sheets over a piece (tests)
            cut = lambda at, end: _whole(value[at:end])  # noqa: E731
        else:
            cut = lambda at, end: value[at:end]  # noqa: E731
        put(b"[")
        for i in range(0, len(value), PIECE_ROWS):
            text = msgspec.json.format(msgspec.json.encode(cut(i, i + PIECE_ROWS)), indent=1)
            put((b"," if i else b"") + pad + text[2:-2].replace(b"\n", pad))  # the items without "[\n" and "\n]"
        put(pad + b"]")
    else:
        put(msgspec.json.format(msgspec.json.encode(value), indent=1).replace(b"\n", pad))


def _encodable(text: str, stream: TextIO) -> bool:
    try:
        encoding = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name
    except LookupError:
        return True
    if encoding == "utf-8":  # the usual console: every document fits, no need to encode it twice
        return True
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def default_file_name(now: _dt.datetime | None = None) -> str:
    """The JSON report's default name: the workbook's prefix and UTC timestamp (``output.default_name``)."""
    return default_name(".json", now)


def _is_stdout(target: object) -> bool:
    """Whether ``target`` is "-" (stdout). Anything that is no path, a path object whose ``__fspath__`` gives an
    int included, is not: ``output_target`` refuses it with a UsageError, where ``fsdecode`` raised TypeError."""
    try:
        return isinstance(target, (str, bytes, os.PathLike)) and os.fsdecode(target) == "-"
    except TypeError:
        return False


def write_json(result: CompareResult, target: str | os.PathLike = ".", now: _dt.datetime | None = None, *,
               create: bool = True, face: Face = CLI_FACE) -> str:
    """Write the JSON document; ``target`` "-" streams it to stdout.

    A directory target gets ``performance_comparison_result_<UTC>.json``; a
    target ending in ``.json`` names the file. The file is written under a
    temporary name and published without replacing an existing file (a
    ``_1``, ``_2``... suffix is added). Returns the path written or "-". ``now``: the run's instant, for
    ``generated_at`` and the default name alike (one clock read: two could fall in different seconds).
    ``create`` False: a missing folder is not made (``output.write_new_files``). ``face``: how the gate's lines
    name the options (``gate_record``).
    """
    now = now or utc_now()
    if _is_stdout(target):
        text = dumps(result, generated_at=now, face=face)
        out = sys.stdout
        if out is None:  # started with stdout closed (`>&-`)
            raise ProfileError("<stdout>", "standard output is closed; nowhere to write the JSON result")
        if not _encodable(text, out):  # e.g. an ASCII locale: the same document with \uXXXX escapes
            text = dumps(result, ascii_only=True, generated_at=now, face=face)
        try:
            out.write(text)
            out.write("\n")
            out.flush()
        except OSError as exc:  # the reader stopped early (`| head`, a jq that exits): not our error
            if not closed_pipe(exc):
                discard_rest(out)  # what is still buffered would fail again at exit
                raise ProfileError("<stdout>", f"cannot write the JSON result: {exc.strerror or exc}") from None
            discard_rest(out)
        return "-"
    path, name = output_target(target, ".json", bool(getattr(getattr(result, "options", None), "force", False)))
    part = json_part(result, generated_at=now, face=face)
    return write_new_file(path, name or default_file_name(now), part[1], part[2], create=create)


def json_part(result: CompareResult, generated_at: _dt.datetime | None = None, face: Face = CLI_FACE) -> Part:
    """The JSON document as a report file to publish (``output.write_new_files``). It is made when the file is
    written, after the workbook where both are: made first, its 305 MB (2 x 516 MB DB pair) were held through the
    workbook's render, the run's peak (2,005 MiB of peak RSS against 1,713-1,731 MiB without the JSON; 1,729 MiB
    now, with ``write_document_file``)."""
    def fill(tmp: str) -> None:
        write_document_file(tmp, to_document(result, generated_at, face, pieces=True))

    return ".json", fill, "JSON result"


def write_document(tmp: str, data: str) -> None:
    """A JSON text and its final line break into ``tmp``."""
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.write("\n")


def text_part(text: str, what: str) -> Part:
    """A JSON text as a report file to publish; ``what`` names it in an error."""
    return ".json", lambda tmp: write_document(tmp, text), what
