"""The job overview of a rank-by-rank compare: ``performance_comparison_result_ranks_{timestamp}.xlsx`` (one sheet,
``Ranks``) and ``.json``, beside the rank reports and with their timestamp. The console's table over the ranks in a
file a user (or a CI job) of 8 or 64 ranks can sort, filter and keep: a row per rank with its times, their changes,
its gate verdict and its reports; a row per rank one folder alone holds, not compared; the job's slowest rank per
side. Built from the small figures collected per rank (``ranks_console.rank_figures``: each rank's own
``frames["overall"]``, or the E2E times of the gate's breakdown), never from a result kept alive."""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..compare.gate import shown_ratio, threshold_text
from ..compare.table import STYLE_INT, STYLE_MS3, STYLE_RATIO_FINE, STYLE_TEXT, Column, Sheet, ms3, ratio_of
from ..compare.verdict import ExportWindow
from ..textsafe import short_list, text_width
from ..units import RankCycle, Unit, job_noun, named_units, unit_label, unit_order
from .excel import render
from .json_report import change, clean, document_head, document_text, text_part
from .output import FILE_PREFIX, Part, output_target, utc_now, write_new_files
from .ranks_console import (
    COMMUNICATION,
    STEP,
    WINDOW,
    Row,
    cycles_of,
    job_lines,
    shown_metrics,
    slowest,
    straggler,
    straggler_lines,
    timed,
)

#: The overview JSON's schema (schemas/ranks.schema.json), versioned apart from the result JSON's: 2 since E2E's
#: diff_ratio is null where a side has no E2E time (version 1 wrote "INF", or 0.0, there), which a reader of 1 may
#: not take.
SCHEMA_VERSION = 2
SCHEMA_ID = f"urn:msprof-compare:ranks-schema:{SCHEMA_VERSION}"
#: The metrics as the time distribution table names them (``ranks_console.METRICS``' order), and the communication
#: time of ranks compared without a time breakdown (``ranks_console.COMMUNICATION``: never beside the others).
LABELS = {"e2e": "E2E", "computing": "Computing", "uncovered_communication": "Uncovered Communication",
          "free": "Free", COMMUNICATION: "Communication"}
#: ``judge_regression``'s status as the rank's verdict: regressed, not regressed, not judged (no E2E time).
VERDICTS = {3: True, 0: False, 1: None}
_VERDICT_TEXT = {True: "yes", False: "no", None: "not judged (no E2E time)"}

#: {unit: (base input, comparison input)} of the units one folder alone holds (None on the side without it).
OneSided = Mapping[Unit, tuple[str | None, str | None]]
#: The Ranks sheet's ``Compared`` cell of a rank not compared, by the side that holds it.
_ONLY_IN_TEXT = {"base": "no (base only)", "comparison": "no (comparison only)", None: "no (in neither folder)"}


@dataclass(repr=False)  # Sheet's short repr
class RanksSheet(Sheet):
    """The ``Ranks`` sheet: a table with the job's line in row 2, frozen with the headers, and its rank workbooks
    linked (the workbook writer reads both; other sheets have neither)."""

    #: the job's line, in row 2
    note: str = ""
    #: {(data row, column): the name of a file beside the workbook}: the cell links to it (a relative link, which
    #: still works when the folder moves)
    links: dict[tuple[int, int], str] = field(default_factory=dict)


def overview(rows: list[Row], inputs: Mapping[Unit, tuple[str, str]], job: tuple[str | None, str | None],
             gates: Mapping[Unit, int] | None = None, pct: float | None = None,
             generated_at: _dt.datetime | None = None, not_compared: OneSided | None = None,
             rank_list: tuple[int, ...] | None = None) -> dict[str, Any]:
    """The overview as a JSON-ready dict: a record per rank (its inputs ``inputs[rank]``, its reports' file names,
    per metric its figures hold ``json_report.change``'s figures, E2E's ``diff_ratio`` as OverallMetrics' Diff
    Ratio (None where E2E's ``diff_ns`` is: a side without E2E time), and with the gate (``pct``) its verdict from
    ``gates``' statuses), the job's slowest rank per side, and the ranks ``not_compared`` (None: not known, as of
    results paired by hand; a listed rank neither folder holds has None on both sides: ``only_in`` null). ``job``:
    the two folders of ranks; ``rank_list``: the ranks ``--rank_list`` selected (None: all). Units of a schedule's
    cycles (``RankCycle``) give each record its ``cycle`` (rank null for a single device) and ``job`` a record per
    cycle (null for a single device)."""
    now = generated_at or utc_now()
    records = [_record(row, inputs[row[0]], None if pct is None or gates is None else gates[row[0]]) for row in rows]
    lines = job_lines(rows)  # without the console's "of ranks 0, 3 selected": rank_list (row 2: Ranks selected)
    return {
        **document_head(SCHEMA_ID, SCHEMA_VERSION, now),
        "base_path": job[0],
        "comparison_path": job[1],
        "fail_on_regression": pct,
        "rank_list": None if rank_list is None else list(rank_list),
        "ranks": records,
        "gate": None if pct is None or gates is None else job_gate(rows, gates, pct),
        "job": _job(rows),
        "job_line": "; ".join(lines) or None,
        "straggler": _straggler(rows),
        "straggler_line": "; ".join(straggler_lines(rows)) or None,
        "not_compared": None if not_compared is None else [
            {**_unit(rank), "only_in": _only_in(paths), "base_path": paths[0], "comparison_path": paths[1]}
            for rank, paths in sorted(not_compared.items(), key=lambda item: unit_order(item[0]))],
    }


def job_status(codes: Iterable[int]) -> int:
    """The job's gate status from its ranks' (``judge_regression``'s): 3 where any rank regressed, else 1 where any
    could not be judged (no E2E time: a CI gate must not pass what it did not judge), else 0. The CLI's exit code
    of a rank-by-rank run and the overview's ``gate.exit_code``, one rule for both."""
    codes = set(codes)
    return 3 if 3 in codes else 1 if 1 in codes else 0


def job_gate(rows: list[Row], gates: Mapping[Unit, int], pct: float) -> dict[str, Any]:
    """The job's gate record: its verdict (``job_status``), which sets the run's exit code, in the words of a rank
    report's ``gate`` (threshold, exit code, regressed), with the ranks that regressed and those not judged, in the
    records' order. Each rank's record had its verdict, but a CI job that kept the overview had to apply the
    exit-code rule itself to know the job's."""
    units = [row[0] for row in rows]
    code = job_status(gates[u] for u in units)
    return {"threshold_pct": clean(pct), "threshold": threshold_text(pct), "exit_code": code,
            "regressed": VERDICTS[code],
            "ranks_regressed": [_unit(u) for u in units if gates[u] == 3],
            "ranks_not_judged": [_unit(u) for u in units if gates[u] == 1]}


def _record(row: Row, paths: tuple[str, str], gate: int | None) -> dict[str, Any]:
    """A compared rank's record: its unit, inputs (``paths``) and reports' names, the figures its ``Row`` holds as
    ``json_report.change``'s (with E2E's Diff Ratio and the largest step) and the gate's verdict (``gate``: its
    status; None where no gate was asked)."""
    rank, figures, reports = row
    record: dict[str, Any] = {**_unit(rank), "base_path": paths[0], "comparison_path": paths[1],
                              "reports": [os.path.basename(p) for p in reports]}
    if figures is not None and COMMUNICATION in figures:  # communication alone: its total of each side
        record["communication"] = change(*figures[COMMUNICATION], zero_known=True)
    if timed(figures):
        for metric in shown_metrics([figures]):
            record[metric] = change(*figures[metric], zero_known=metric != "e2e")
        base, comp = figures["e2e"]
        # the ms OverallMetrics' E2E Time row divides: its Diff Ratio. None where a side has no E2E time, as the
        # diff: an unknown time, not 0 ms (it read INF, or 0.00 %, a comparison that took no time)
        e2e = record["e2e"]
        e2e["diff_ratio"] = None if e2e["diff_ns"] is None else clean(ratio_of(base / 1e6, comp / 1e6))
        if STEP in figures:  # the breakdown's waterfall step that moved most, null where none moved
            step = figures[STEP]
            record["largest_step"] = None if step is None else {
                "step": step[0], "diff_ns": step[1], "diff_ms": step[1] / 1e6}
    if figures is not None and WINDOW in figures:
        record["export_window"] = _window_record(figures[WINDOW])
    record["regressed"] = None if gate is None else VERDICTS[gate]
    return record


def _window_record(window: ExportWindow) -> dict[str, Any]:
    """A rank's ``export_window`` (``ranks_console.WINDOW``): the DB side, its time outside its computing and
    communication (ns, ms), the copies in it (null where they were not read) and the words the rank line says."""
    read = window.copies >= 0
    return {"side": window.side, "ns": window.ns, "ms": window.ns / 1e6, "copies": window.copies if read else None,
            "copies_ns": window.copies_ns if read else None, "held": window.held()}


def job_name(document: dict[str, Any]) -> str:
    """"Ranks", or "Cycles" where the document's units are a single device's cycles (records of rank null): the
    sheet's name and, lower-cased, the file's (``performance_comparison_result_cycles_*``), as the console's title
    (``units.job_noun``); the records stay the schema's ``ranks``."""
    units = [RankCycle(r["rank"], r["cycle"]) if "cycle" in r else r["rank"]
             for r in document["ranks"] + (document["not_compared"] or [])]
    return job_noun(units)


def _unit(unit: Unit) -> dict[str, int | None]:
    """A record's ``rank``, and its ``cycle`` where the folders hold a schedule's cycles."""
    return {"rank": unit.rank, "cycle": unit.cycle} if isinstance(unit, RankCycle) else {"rank": unit}


def _job(rows: list[Row]) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The job's slowest rank per side and their change: one record (ranks alone), a record per cycle (a schedule's
    cycles of ranks), None without figures or for a single device's cycles."""
    found = {cycle: slowest(of_cycle) for cycle, of_cycle in cycles_of(rows).items()}
    records = [{**({} if cycle is None else {"cycle": cycle}), "base_rank": job[0][0], "comparison_rank": job[1][0],
                **change(job[0][1], job[1][1])} for cycle, job in found.items() if job is not None]
    if None in found:  # ranks alone: the one job
        return records[0] if records else None
    return records or None


def _straggler(rows: list[Row]) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The likely straggler (``ranks_console.straggler``): a record (ranks alone) or a record per cycle where one is
    found (a schedule's cycles), None where none is."""
    records = []
    cycles = cycles_of(rows)
    for cycle, of_cycle in cycles.items():
        found = straggler(of_cycle)
        if found is not None:
            rank, computing, wait, others = found
            records.append({**({} if cycle is None else {"cycle": cycle}), "rank": rank,
                            "computing_diff_ns": computing, "computing_diff_ms": computing / 1e6,
                            "other_ranks": others, "others_uncovered_communication_diff_ms": clean(wait / 1e6)})
    if None in cycles:
        return records[0] if records else None
    return records or None


def _only_in(paths: tuple[str | None, str | None]) -> str | None:
    """The folder holding a rank not compared: "base", "comparison", or None for a listed rank neither holds."""
    return None if paths == (None, None) else "base" if paths[1] is None else "comparison"


#: The widest an input column grows: with the Rank column, which each printed page repeats, it still fits a page
#: at the smallest print scale (`excel._print_across`); wider, no page would repeat the Rank column.
INPUT_MAX_WIDTH = 190


def sheet(document: dict[str, Any], with_json: bool = True) -> RanksSheet:
    """The ``Ranks`` sheet of ``overview``'s document: Rank; the base's times, the comparison's (ms, to the us as
    the Summary shows them) and their changes, as OverallMetrics lays a breakdown out (E2E alone where the gate
    alone made a breakdown); with the gate each rank's verdict; its reports (the workbook a link to the file beside
    this one) and inputs. Without figures (no time breakdown) ranks, reports and inputs only. The ranks one folder
    alone holds follow the compared ones, their figures and verdict blank, a ``Compared`` column saying which side
    holds them (only then: a job with every rank compared keeps its columns). Row 2 holds the ranks selected,
    the job line and with the gate its verdict (``_note``). Records of a schedule's cycles: Rank and Cycle first,
    Cycle alone for a single device (rank null); the captions and the columns repeated on each printed page follow
    them. ``with_json``: whether the run writes the overview's JSON, which row 2 may point to."""
    compared = document["ranks"]
    records = compared + (document["not_compared"] or [])
    metrics = [m for m in LABELS if any(m in r for r in compared)]
    named = ["rank"] if all(r["rank"] is not None for r in records) else []
    named += ["cycle"] if any("cycle" in r for r in records) else []  # a schedule's cycles: Rank, Cycle / Cycle
    columns = [Column(key.title(), STYLE_INT, 8) for key in named]
    data: list[list[Any]] = [[r[key] for r in records] for key in named]
    for side in ("base", "comparison"):
        for metric in metrics:
            columns.append(Column(f"{LABELS[metric]} Time(ms)", STYLE_MS3, len(LABELS[metric]) + 12))
            data.append([r[metric][f"{side}_ms"] if metric in r else None for r in records])
    for metric in metrics:
        columns.append(Column(f"{LABELS[metric]} Diff(ms)", STYLE_MS3, len(LABELS[metric]) + 12))
        data.append([r[metric]["diff_ms"] if metric in r else None for r in records])
        if metric == "e2e":
            columns.append(Column("E2E Diff Ratio", STYLE_RATIO_FINE, 16))
            data.append([_ratio_cell(r, document["fail_on_regression"]) for r in records])
    if document["fail_on_regression"] is not None:
        # the threshold as the gate's line states it, the decimal each verdict judges by
        columns.append(Column(f"Regressed (> {threshold_text(document['fail_on_regression'])}%)", STYLE_TEXT, 24))
        data.append([_VERDICT_TEXT[r["regressed"]] if "regressed" in r else None for r in records])
    if any("largest_step" in r for r in compared):  # what drove each rank's change: name, then its change
        steps = [r.get("largest_step") for r in records]
        names = [s["step"] if s else None for s in steps]
        columns.append(Column("Largest Step", STYLE_TEXT, min(max([14, *(text_width(n) + 2 for n in names if n)]),
                                                               _STEP_MAX_WIDTH)))
        data.append(names)
        columns.append(Column("Largest Step Diff(ms)", STYLE_MS3, 23))
        data.append([s["diff_ms"] if s else None for s in steps])
    links: dict[tuple[int, int], str] = {}
    for kind, ext in (("Workbook", ".xlsx"), ("JSON Report", ".json")):
        names = [next((n for n in r.get("reports", ()) if n.lower().endswith(ext)), "") for r in records]
        if any(names):
            if ext == ".xlsx":
                links.update({(i, len(columns)): n for i, n in enumerate(names) if n})
            columns.append(Column(kind, STYLE_TEXT, max(len(n) for n in names) + 2))
            data.append(names)
    if len(records) > len(compared):
        columns.append(Column("Compared", STYLE_TEXT, 22))
        data.append([_ONLY_IN_TEXT[r["only_in"]] if "only_in" in r else "yes" for r in records])
    first = len(columns)
    for side in ("base", "comparison"):
        paths = [r[f"{side}_path"] for r in records]
        # as wide as the longest path (`INPUT_MAX_WIDTH` at most): at 60 the cell beside cut the path's end,
        # where its run and rank folders are (the samples' 71-character paths read ".../level0/rank0_ascend")
        width = max([60, *(text_width(p) + 2 for p in paths if p)])
        columns.append(Column(f"{side.title()} Input", STYLE_TEXT, min(width, INPUT_MAX_WIDTH)))
        data.append(paths)
    n, k = len(metrics), len(named)  # the base's times start after the columns naming the unit
    spans = ((k, k + n - 1), (k + n, k + 2 * n - 1)) if n else ((first, first), (first + 1, first + 1))
    frame = pd.DataFrame(dict(enumerate(data)))
    return RanksSheet(job_name(document), columns, frame, *spans, note=_note(document, with_json), links=links)


def _ratio_cell(record: dict[str, Any], pct: float | None) -> float | None:
    """A record's E2E Diff Ratio cell: OverallMetrics' (4 places: 0.00 %), or for a rank the gate judged, as many
    more places as it takes to stand on the side of the Regressed header's threshold its verdict put it on
    (``gate.shown_ratio``; shown by ``STYLE_RATIO_FINE``): "105.17%" read alike beside "> 5.173252%" for a rank
    at +5.1733 % that regressed and one at +5.1724 % that did not. The JSON keeps the 4 places (its diff_pct is
    the float's, its ns exact)."""
    e2e = record.get("e2e")
    if e2e is None:
        return None
    if pct is None or not isinstance(record.get("regressed"), bool) or e2e["diff_ns"] is None:
        return e2e["diff_ratio"]
    return shown_ratio(e2e["base_ns"], e2e["comparison_ns"], pct, record["regressed"])


def _note(document: dict[str, Any], with_json: bool = True) -> str:
    """Row 2: the ranks selected (``rank_list``, not all: a reader of the workbook alone knows the job was
    narrowed; a few of many, as every listed rank has its row) and those of them not compared (``_unmatched``),
    then the job's line (a line per cycle of ranks), the straggler line and the job's gate verdict
    (``_gate_text``), each on a line of its own: run together with "; " and wrapped over the merged cells, the
    verdict that sets the exit code began mid-line after the job's figures."""
    selected = document["rank_list"]
    said = [f"Ranks selected: {short_list(selected, _LISTED, escape=False)}{_unmatched(document, selected)}"
            if selected is not None else _one_sided(document),
            *_CYCLE_LINE.split(document["job_line"] or ""), *_CYCLE_LINE.split(document.get("straggler_line") or ""),
            _window_text(document["ranks"], with_json), _gate_text(document.get("gate"))]
    return "\n".join(part for part in said if part)


def _window_text(records: list[dict[str, Any]], with_json: bool = True) -> str:
    """Where text exports meet DB exports, what the DB side's E2E and Free Time count that a text export's leave
    out, per unit (``_LISTED`` at most, then the count; the JSON's ``export_window`` gives what each holds): the
    rank line said it, the workbook nothing, and its Free column read +5.200 ms for rank 0 of text level 1 -> DB
    level 1, 5.686 ms of it that window. "" where no record has one. Without the overview's JSON (``with_json``
    False: ``--output_format xlsx``, the default) the line sends the reader to each rank's Summary, which says it
    too: it named a JSON field of a file the run did not write."""
    said = []
    for side in ("base", "comparison"):
        held = [(r, r["export_window"]) for r in records if (r.get("export_window") or {}).get("side") == side]
        if held:
            listed = ", ".join(f"{unit_label(_units([r])[0])} {ms3(w['ns']):.3f} ms" for r, w in held[:_LISTED])
            more = f", ... ({len(held):,} in all)" if len(held) > _LISTED else ""
            said.append(f"the {side} side's {listed}{more}")
    if not said:
        return ""
    where = "JSON: ranks[].export_window" if with_json else "each rank's Summary says what it holds"
    return (f"E2E and Free Time of a DB export count its time outside its computing and communication, which a text "
            f"export's leave out: {'; '.join(said)} ({where})")


#: Where the document's job and straggler lines of a schedule's cycles join a cycle's line to the one before
#: ("; "-joined: ``job_lines``, ``straggler_lines``; a straggler line holds "; " of its own)
_CYCLE_LINE = re.compile(r"; (?=Job cycle \d|Likely straggler of cycle \d)")


def _gate_text(gate: dict[str, Any] | None) -> str:
    """The job's ``--fail_on_regression`` verdict (``job_gate``'s record), as the run's exit code and its line name
    it: each rank's row had its verdict, but a reader of the workbook alone had to apply ``job_status`` to know
    the job's. "" without the gate. Each list names ``_LISTED`` units at most, then the count, as "Ranks selected"
    above it: a 150-rank job's verdict listed every rank, a line of 600 characters wrapped over the row; the JSON's
    gate record and the console's error line keep every unit."""
    if gate is None:
        return ""
    head = f"--fail_on_regression {gate['threshold']} (exit code {gate['exit_code']}): "
    regressed, unjudged = (_listed_units(_units(gate[key])) if gate[key] else ""
                           for key in ("ranks_regressed", "ranks_not_judged"))
    if gate["exit_code"] == 3:
        said = f"{regressed} regressed beyond the threshold{f'; {unjudged} could not be judged' if unjudged else ''}"
    elif gate["exit_code"] == 1:
        said = f"{unjudged} could not be judged (no E2E time)"
    else:
        said = "no regression beyond the threshold"
    return f"{head}{said}"


def _listed_units(units: list[Unit]) -> str:
    """``named_units`` of the first ``_LISTED`` units, then ", ... (N in all)" where there are more (``short_list``'s
    form, the "Ranks selected" line's)."""
    shown = named_units(units[:_LISTED])
    return shown + (f", ... ({len(units):,} in all)" if len(units) > _LISTED else "")


def _units(records: list[dict[str, int | None]]) -> list[Unit]:
    """``_unit``'s records back as units (for ``named_units``); [] for none."""
    return [RankCycle(r["rank"], r["cycle"]) if "cycle" in r else r["rank"] for r in records]


def _one_sided(document: dict[str, Any]) -> str:
    """"Rank 1 not compared (one folder alone holds it)" of the ranks one folder alone holds and no record compares,
    as the console's job line names them ("Job (slowest rank per side, rank 1 not compared)"), where row 2 gave the
    job line alone, as the whole job's; "" where there is none, or a selection names them (``_unmatched``)."""
    compared = {r["rank"] for r in document["ranks"]}
    alone = sorted({r["rank"] for r in document["not_compared"] or ()} - compared - {None})
    if not alone:
        return ""
    one = len(alone) == 1
    return f"{_ids(alone).capitalize()} not compared (one folder alone holds {'it' if one else 'them'})"


def _ids(ids: list[int]) -> str:
    """"rank 7", "ranks 1, 7": ids as row 2 names them (``_LISTED`` at most, then the count)."""
    return f"{'rank' if len(ids) == 1 else 'ranks'} {short_list(ids, _LISTED, escape=False)}"


def _unmatched(document: dict[str, Any], selected: list[int]) -> str:
    """" (rank 7 not compared)" of the selected ranks without a compared record, as the console's job line names
    them ("of ranks 0, 7 selected, rank 7 not compared"), where row 2 listed them alike with the compared ones
    and only the Compared column of their rows told them apart; of a schedule's cycles, those compared in no cycle,
    then per cycle those missing from it (" (rank 1 not compared in cycle 2)"). "" where every one was compared."""
    compared: dict[int | None, set[int]] = {}
    for r in document["ranks"]:
        compared.setdefault(r.get("cycle"), set()).add(r["rank"])
    if not compared or any(r["rank"] is None for r in document["ranks"]):  # a single device's cycles: no ranks
        return ""
    anywhere = set().union(*compared.values())
    nowhere = [r for r in selected if r not in anywhere]
    said = [f"{_ids(nowhere)} not compared"] if nowhere else []
    if None not in compared:  # a schedule's cycles: a rank compared in some cycles is named for the others
        said += [f"{_ids(missing)} not compared in cycle {cycle}" for cycle in sorted(compared)
                 if (missing := [r for r in selected if r in anywhere and r not in compared[cycle]])]
    return f" ({'; '.join(said)})" if said else ""


#: The widest the Largest Step column grows (a communication group's name can be long; the cell keeps it whole).
_STEP_MAX_WIDTH = 60
#: How many ids of ``rank_list`` row 2 names (``_note``): a long list would take rows of its own.
_LISTED = 32


def parts(document: dict[str, Any], formats: tuple[str, ...]) -> list[Part]:
    """The overview's files to publish (``output.write_new_files``), those ``formats`` name."""
    out: list[Part] = []
    if "xlsx" in formats:
        captions = (f"Base Profiling: {document['base_path'] or ''}",
                    f"Comparison Profiling: {document['comparison_path'] or ''}")
        table = sheet(document, with_json="json" in formats)
        out.append((".xlsx", lambda tmp: render([table], tmp, captions), "job overview workbook"))
    if "json" in formats:
        out.append(text_part(document_text(document), "job overview JSON"))
    return out


def write_overview(document: dict[str, Any], folder: str, stamp: str, formats: tuple[str, ...],
                   force: bool = False, *, create: bool = True) -> list[str]:
    """Publish the overview into ``folder`` as ``performance_comparison_result_ranks_{stamp}`` (``_cycles_`` for a
    single device's cycles: ``job_name``; .xlsx and .json by ``formats``): rendered under temporary names,
    published whole under one free name, never over a file. The folder is checked and named as the rank reports'
    (``output.output_target``: its absolute path). ``create`` False: where the folder is gone (removed with the rank
    reports it held) it is not made again (``output.FolderGone``)."""
    directory = output_target(folder, ".xlsx", force, folder_only=True)[0]
    return write_new_files(directory, f"{FILE_PREFIX}{job_name(document).lower()}_{stamp}", parts(document, formats),
                           create=create)
