"""The notes under the contributors (``unexplained_note``, in the console, the JSON, the ``Summary`` sheet and the
gate's message): why the waterfall steps stand in for a level, wrapper ops and --op_name_map pairs (worded alike
for the memory contributors: ``mark_pairs``, ``pair_notes``), kernel types of the whole profile, how much of the E2E
change the contributors explain, where a change of communication comes from (``communication_kernels_note``,
``wait_split_note``, ``unsplit_communication_note``), which of them hold collective communication, and what a large
Free: Other change is, with what the profiles hold on it (``idle_growth_note``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..textsafe import and_list, shell_word
from . import checks
from .communication_summary import OVERLAP_SHIFT_SHARE, overlap_words
from .contributors import level_gross_ms, level_net_ms
from .table import Sheet, decimal_diff, half_up, ms3, sheet_numbers
from .waterfall import FREE_OTHER_STEP, SDMA_STEP, step_mask

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext
    from .verdict import ExportWindow


#: Below this share of the E2E change, the contributors of a level are said to explain little of it.
EXPLAINED_SHARE = 0.5
#: From this many times the E2E change (same sign), the contributors of a level are said to overstate it.
OVERSTATED_SHARE = 2.0


#: The note says what the Share column is of where the net change is this much (of it) smaller.
SHARES_BASIS_GAP = 0.05


def _shares_basis(contrib: pd.DataFrame, net: float) -> str:
    """Where some rows grew and others shrank, what the Share column is of, beside the net change the note
    gives: on the README's BERT pair the note said "all operators together changed by +0.081 ms" under a
    +0.076 ms row with a Share of 58.8 % (of 0.130 ms), which no reader could reconcile. "" where the net is within
    ``SHARES_BASIS_GAP`` of that basis. The basis is the rows' whole-ns diffs added up, so it is taken to the ns
    and shown a half away from zero (``ms3``), as every ms of the Summary: ``{:.3f}`` of the float read the BERT
    pair's 120.5 us basis (one attn_fwd kernel 9.279 us shorter) as 0.120 ms."""
    gross = level_gross_ms(contrib)
    if gross - abs(net) < SHARES_BASIS_GAP * gross:  # the net is about the basis: the shares read as its parts
        return ""
    # |Diff| / Share gives the basis back to within a float's error: whole ns again before the half is rounded
    basis = ms3(round(gross * 1e6))
    return f"{SHARES_BASIS_LEAD}{basis:.3f} ms, the sizes of their changes added up {SHARES_BASIS_END}"


#: How ``_shares_basis``'s clause starts and ends: the regression gate, which shows no Share column, words it
#: for its percentages or leaves it out (``gate.py``).
SHARES_BASIS_LEAD = "; the Share column is of "
SHARES_BASIS_END = "(savings do not cancel growth)"


#: A waterfall step outside device time is named in the note from this share of the E2E change.
NAMED_STEP_SHARE = 0.1


def _outside_steps(wf: pd.DataFrame, e2e_delta_ns: int) -> tuple[str, bool, int | None]:
    """The one or two waterfall steps outside any operator's device time (communication, free time) that
    moved with the E2E change by at least NAMED_STEP_SHARE of it (and by a shown 0.001 ms), largest first,
    whether together they hold half of the change or more (the note then says where the change is instead of
    listing what it might be), and, where they hold all of it, what the other steps moved the other way (ns;
    None where they hold less): "most of it in Free: Other -0.493 ms" of a -0.412 ms change said less than the
    figures. ("", False, None) when no step qualifies."""
    cat = col_of(wf, "Category", object)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    moved = delta * np.sign(e2e_delta_ns) >= max(NAMED_STEP_SHARE * abs(e2e_delta_ns), 500)
    pick = np.flatnonzero(np.isin(cat, ["communication", "free"]) & moved)
    pick = pick[np.argsort(-np.abs(delta[pick]), kind="stable")][:2]
    steps = col_of(wf, "Step", object)
    named = " and ".join(f"{steps[i]} {ms3(delta[i]):+.3f} ms" for i in pick)
    held = int(delta[pick].sum())
    rest = e2e_delta_ns - held if len(pick) and abs(held) >= abs(e2e_delta_ns) else None
    return named, bool(len(pick)) and abs(held) * 2 >= abs(e2e_delta_ns), rest


#: Said after a pointer to ApiCompare in a run that writes none (``--enable_profiling_compare`` alone, as the README's
#: multi-rank and CI examples run), as the Wait Time note says of CommunicationCompare (``overall._plane_reason``).
API_SHEET_ABSENT = "; this run writes no ApiCompare: the enable_api_compare option adds it"


def unchanged_why(rows: pd.DataFrame, wf: pd.DataFrame, flow_cat: str = "", api_sheet: bool = True,
                  window: ExportWindow | None = None, copies: tuple[int, int] | None = None) -> str:
    """Why no row of a level changed while the waterfall did. Rows holding no device time on either side: no
    kernel is linked to an operator (a trace without launch flows). Rows holding device time: the change is time
    no operator holds; where uncovered communication moved, the overlap moved (``overlap_words``: a collective
    as long as before at another time, whose operator holds its kernel); where SDMA moved, a copy on a compute
    stream changed (moved to another stream it is Free: Other, reference-1 §4.3); where it is idle time, the
    device waited, as on a host-bound slowdown (a launch or copy call that took longer), which a trace with launch
    flows shows and that was said to lack them. Computing categories that moved against each other hold the same
    kernels under another category (a renamed kernel, another op Type or PMU figures, or a Conv's operator on
    the backward thread of a text export or GPU trace, reference-1 §3.8); Lccl gained from Free Time
    alone is kernel time the Free Time formula takes out a second time: neither is time no operator holds, which
    both were said to be. ``api_sheet``: whether the run writes ApiCompare, which the idle-time words point to.
    ``window``: a DB export's window tasks beside a text export (``verdict.export_window``), taken out of idle time
    as the note's main path does (``window_words``, in the words that say what they are: the reason is one text for
    every face). ``copies``: ``free_other_copies``, which ``free_other_is`` names beside the idle time."""
    held = float(np.nansum(rows["Base(ms)"].to_numpy(dtype=float)) +
                 np.nansum(rows["Comparison(ms)"].to_numpy(dtype=float)))
    if not held:
        # the bert pair under --gpu_flow_cat foo has its ac2g flows: "a trace without" them misread it. The option is
        # named bare: compare()'s result carries these words too, whose caller wrote gpu_flow_cat="foo"
        if flow_cat:
            return (f"no kernel is linked to an operator: no launch flow of category {flow_cat!r}, the gpu_flow_cat "
                    "given")
        return "as where no kernel is linked to an operator: a trace without launch flows"
    step = step_mask(wf)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    all_moved = np.flatnonzero(step & (delta != 0))
    cats, steps = col_of(wf, "Category", object), col_of(wf, "Step", object)
    comm = int(delta[all_moved[cats[all_moved] == "communication"]].sum())
    sdma = int(delta[all_moved[steps[all_moved] == SDMA_STEP]].sum())
    kinds = set(cats[all_moved])
    # computing steps that moved against each other, their sum and Computing unchanged: the same kernels in
    # another category (a name, op Type or PMU figures that changed), which an operator's device time never shows
    regrouped = kinds == {"computing"} and len(all_moved) > 1 and not int(delta[all_moved].sum())
    # the steps named and weighed: those whose change shows at 0.001 ms ("Free: Other +0.100 ms and Vector +0.000
    # ms" named a step 3 ns shorter)
    moved = all_moved[np.abs(delta[all_moved]) >= 500]
    moved = moved[np.argsort(-np.abs(delta[moved]), kind="stable")]
    # the communication (SDMA) steps decide where they moved a quarter of the step that moved most or more (the
    # share the communication line's rule uses, OVERLAP_SHIFT_SHARE, there of the larger of the uncovered part's and
    # the op rows' changes, with a 0.05 ms floor: so the line may still give a small overlap change, the hta host
    # 2 ms late beside 0.052 ms less uncovered communication, whose note reads idle time); any move decided
    most = OVERLAP_SHIFT_SHARE * abs(int(delta[moved[0]])) if len(moved) else 0
    named = " and ".join(f"{steps[i]} {ms3(delta[i]):+.3f} ms" for i in moved[:2])
    if regrouped:
        why = ("the same kernel time in other computing categories: a kernel's category follows its name, op type, "
               "PMU figures and the operator around it (its name and, outside a DB export, its thread), so kernels "
               "as long as before are counted under another category")
    elif "lccl" in kinds and not comm and not int(delta[all_moved[np.isin(cats[all_moved], ["lccl", "free"])]].sum()):
        # Free Time is E2E less computing, Lccl and uncovered communication (reference-1 §5.4 9): a kernel named
        # kernel_aivec is computing on the timeline too, so its time left Free Time while the device idled as long
        why = ("Lccl time (kernels named kernel_aivec) that Free Time gave up: Free Time is E2E - computing - Lccl - "
               "uncovered communication, and their time counts as computing or communication too, so the device "
               "idled as long as before")
    elif comm and abs(comm) >= most:
        # a collective as long as before at another time (its kernel and its operator unchanged) under less computing
        # was "time no operator's kernels hold", while its operator held the kernel
        why = (f"{overlap_words('less' if comm > 0 else 'more')}: kernels ran at other times, which no operator's "
               "device time shows")
    elif sdma and abs(sdma) >= most:
        # a copy moved off the compute stream is Free: Other, not SDMA (reference-1 §4.3): that read as the device
        # waiting for a slower host, beside a copy that ran as long as before
        why = (f"copy time on a compute stream ({SDMA_STEP}): a copy longer or shorter, or one moved between a "
               "compute stream and another stream, where it is Free: Other")
    elif len(moved) and cats[moved[0]] == "free" and window is not None and steps[moved[0]] == FREE_OTHER_STEP:
        why = window_words(int(delta[moved[0]]), window, True, api_sheet)
    elif len(moved) and cats[moved[0]] == "free":  # its sign: a comparison whose host was quicker waited less
        longer = delta[moved[0]] > 0
        why = f"{free_other_is(copies)}: {_idle_words(longer, api_sheet)}"
    else:
        why = "time no operator's kernels hold"
    return f"the change is in {named}, {why}"


def unexplained_note(contrib: pd.DataFrame | None, wf: pd.DataFrame | None,
                     comm: pd.DataFrame | None = None) -> str:
    """The note under the contributors: ``fallback_note`` (why the waterfall steps stand in for a level),
    ``wrapper_note`` (each side's operators under one top-level op of another name), ``all_steps_note``,
    ``name_map_note``, ``_unexplained`` (how much of the E2E change they explain), the notes on where a change of
    communication comes from (``communication_kernels_note``, ``wait_split_note``, ``unsplit_communication_note``),
    the communication note (``_communication_pieces``: which of them hold collective communication, from ``comm``:
    the run's "contributor_communication" frame), then ``idle_growth_note``. "" when none applies."""
    parts = _unexplained_parts(contrib, wf, comm)[0]
    idle = idle_growth_note(contrib, wf, parts)
    return "; ".join([*parts, idle] if idle else parts)


def _unexplained_parts(contrib: pd.DataFrame | None, wf: pd.DataFrame | None,
                       comm: pd.DataFrame | None, lead: str = SHARES_BASIS_LEAD,
                       computing: bool = True, beside: bool = False
                       ) -> tuple[list[str], tuple[str, str, str, str] | None]:
    """``unexplained_note``'s parts, those that apply, in its order, and the communication note's pieces
    (``_communication_pieces``) with the operators net of it (``net_of_communication_note``, "" for none or
    without ``computing``), which the console's sentences split again: worked out once. ``lead``: how the
    Share column's basis is introduced (``contributors_note_lines``). ``beside``: the note is shown under the
    waterfall and the E2E line (the console, the Summary sheet, the gate's message), whose figures it then does not
    repeat (``_idle_next``, ``unsplit_communication_note``); the JSON's one line says them, to be read alone."""
    pieces = _communication_pieces(contrib, comm, wf is not None and bool(len(wf)))
    net = net_of_communication_note(contrib, comm) if pieces and computing else ""
    parts = [fallback_note(contrib), wrapper_note(contrib), one_sided_note(contrib), all_steps_note(contrib),
             name_map_note(contrib), _basis_worded(_unexplained(contrib, wf, beside), lead),
             communication_kernels_note(contrib), wait_split_note(contrib, wf),
             unsplit_communication_note(contrib, wf, beside),
             _joined(pieces), net]
    return [p for p in parts if p], pieces and (*pieces, net)


#: The regression gate's words for the Share column's basis under its contributor lines, which show percentages and
#: no Share column (``contributors_note_lines``' ``lead``).
GATE_BASIS_LEAD = "; the percentages above are of "


def _basis_worded(part: str, lead: str) -> str:
    """``part`` with the Share column's basis introduced by ``lead``, or left out for a ``lead`` of "" (the gate,
    where it lists no contributor: Falconsai MI300X -> H100, whose gate printed only the waterfall steps)."""
    at = part.find(SHARES_BASIS_LEAD)
    if at < 0 or lead == SHARES_BASIS_LEAD:
        return part
    if lead:
        return part[:at] + lead + part[at + len(SHARES_BASIS_LEAD):]
    end = part.find(SHARES_BASIS_END, at) + len(SHARES_BASIS_END)
    return part[:at] + part[end:]


def contributors_note_lines(contrib: pd.DataFrame | None, wf: pd.DataFrame | None,
                            comm: pd.DataFrame | None = None, lead: str = SHARES_BASIS_LEAD,
                            computing: bool = True) -> list[str]:
    """The console's note under the contributors: "Note: ``unexplained_note``." on one line ([] for none), or where
    it holds the wrapper note (``wrapper_note``), a block: the note up to the wrapper note's opening, a "  - " line
    per side's wrapper with its figure, then its advice and the parts after it. The Summary sheet writes these lines,
    a row each, and the JSON gives them beside the one line (``contributors_note_lines``): on the tracelens vLLM
    pair, whose wrappers are 100-character batch names, that line was 772 characters. The ``--fail_on_regression``
    message writes them too, with ``lead`` ``GATE_BASIS_LEAD`` or "" (``_basis_worded``): its one line was 500
    characters on the DB level2 -> level1 pair; it passes ``computing`` False, which leaves out the operators net of
    communication (``net_of_communication_note``): the gate's message lists the contributors it judges alone."""
    # ``beside``: the lines stand under the waterfall and the E2E line, whose figures they leave out
    parts, pieces = _unexplained_parts(contrib, wf, comm, lead, computing, beside=True)
    lines = _note_lines(contrib, parts, pieces, lead)
    # the idle note after the rest, a sentence of its own; not in the gate's message, which lists what it judges.
    # Its test of the other parts ("device idle time" said already) reads these: ``lead`` rewords only the basis
    idle = idle_growth_note(contrib, wf, parts) if computing else ""
    if not idle:
        return lines
    return [*lines, f"{'' if lines else 'Note: '}{idle[0].upper() if lines else idle[0]}{idle[1:]}."]


def _note_lines(contrib: pd.DataFrame | None, parts: list[str], pieces: tuple[str, str, str, str] | None,
                lead: str) -> list[str]:
    """``contributors_note_lines`` without the idle note (``idle_growth_note``), of ``_unexplained_parts``' pair."""
    one_sided = one_sided_note(contrib)
    if one_sided and one_sided in parts:
        # a block as the two-sided note's: its opening, the wrapper's line, the advice, then the other parts'
        # sentences (the communication note's figures on pair 4), not one line of them all
        i = parts.index(one_sided)
        opening, item, advice = one_sided_pieces(contrib.attrs["one_sided_wrapper"])
        rest = _sentences(parts[i + 1:], pieces, lead or SHARES_BASIS_LEAD)
        rest = [t.removeprefix("Note: ") for t in rest]
        return ["Note: " + "; ".join([*parts[:i], opening]) + ":", f"  - {item}",
                f"{advice[0].upper()}{advice[1:]}.", *(f"{t[0].upper()}{t[1:]}" for t in rest)]
    found = contrib.attrs.get("wrappers") if contrib is not None and parts else None
    wrapper = wrapper_note(contrib) if found else ""
    if not wrapper or wrapper not in parts:
        return _sentences(parts, pieces, lead or SHARES_BASIS_LEAD)
    i = parts.index(wrapper)
    opening, items, advice = wrapper_pieces(found, *_TIME_WRAPPER, bool(contrib.attrs.get("details_off")),
                                            bool(contrib.attrs.get("wrappers_mapped")))
    # the advice and the parts after it, a part's sentences after its first a line each (``_split_sentences``: the
    # Wait / Transmit sentences, inline here where every other block gave them a line each)
    rest = _split_sentences("; ".join([advice, *parts[i + 1:]]))
    return ["Note: " + "; ".join([*parts[:i], opening]) + ":", *(f"  - {t}" for t in items),
            *(f"{t[0].upper()}{t[1:]}." for t in rest)]


def _sentences(parts: list[str], pieces: tuple[str, str, str, str] | None,
               lead: str = SHARES_BASIS_LEAD) -> list[str]:
    """The console's note without wrappers, in sentences of a line each: "Note: " and the parts but the last
    ones below, joined by "; " as on the sheet; then the Share column's basis, which ends ``_unexplained``'s part
    (``SHARES_BASIS_LEAD``); then the communication note (``pieces``, where it is the last part), its figures, and
    its why as a sentence of its own, then the operators net of it (``net_of_communication_note``, a part after it
    where it applies); a part's sentences after its first (``SENTENCE_OPENINGS``) each a line too. The sheet's and
    the JSON's one line was 729 characters on reference pair 4.
    ``parts`` and ``pieces`` are ``_unexplained_parts``' pair: with pieces, the communication note is the last part
    but that one;
    ``lead``: the basis's opening in them."""
    body = parts[:-1 - bool(pieces[3])] if pieces else parts
    # the parts after the one that ends with the Share column's basis (the notes on communication's change) are a
    # sentence of their own, not more of the basis's
    at = next((i for i, p in enumerate(body) if lead in p), len(body) - 1)
    head, found, basis = "; ".join(body[:at + 1]).partition(lead)
    said = [head] if head else []
    said += [f"{found[2:]}{basis}"] if found else []
    said += ["; ".join(body[at + 1:])]
    said += [f"{pieces[0]}: {pieces[2]}", f"these are {pieces[1]}", *pieces[3:4]] if pieces else []
    said = [s for t in said if t for s in _split_sentences(t)]
    return [f"Note: {said[0]}.", *(f"{t[0].upper()}{t[1:]}." for t in said[1:])] if said else []


def _split_sentences(text: str) -> list[str]:
    """``text`` cut before each of ``SENTENCE_OPENINGS`` that follows a ". ", the stop dropped (``_sentences`` ends
    each line with one). A cut at a character of its own would cut a name that holds it too: an HCCL group's name
    is the data's, a line break and all (``term_safe`` escapes it later)."""
    return re.split(r"\. (?=" + "|".join(re.escape(w) for w in SENTENCE_OPENINGS) + ")", text)


def paired_names_map(ctx: RunContext) -> Mapping[str, str]:
    """The --op_name_map that pairs operators in this run: none under --disable_details, which matches no operator
    (reference-1 §1.5), and where the run warns that the map is ignored, a note saying that it pairs names only
    contradicted the warning."""
    return {} if ctx.options.disable_details else ctx.options.op_name_map


def mapped_names(names: list[str], base: np.ndarray, comp: np.ndarray, contrib: pd.DataFrame,
                 op_name_map: Mapping[str, str], digits: int) -> list[tuple[list[str], float, float]]:
    """Per group of statistic rows (``names``, each side's ``base`` / ``comp`` figures) that --op_name_map makes one
    name (``op_name_map.get(name, name)``, as the operator pairing applies it to both sides) with a listed
    contributor among them: (the names, those with a base figure first, and the rows' figures together, to
    ``digits`` decimals), in the order of their first listed contributor (the note shows the first three: in the
    order of each group's first sheet row, a larger contributor's group was left off for a smaller one's). The statistic
    sheets keep a row per name (reference-2 §2.7, §5), so a GPU op and its NPU namesake paired by the map were two
    contributors of opposite sign, and the change of the pair the user asked to compare was in no figure."""
    if not op_name_map or not len(contrib):
        return []
    members: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        members.setdefault(op_name_map.get(n, n), []).append(i)
    rank = {n: r for r, n in reversed(list(enumerate(col_of(contrib, "Name").tolist())))}
    out = []
    for idx in members.values():
        # rows without a figure on either side (an op without device time: aten::view) add nothing to the pair, and
        # a group of the listed row and those alone only repeated its own figures
        idx = [i for i in idx if base[i] or comp[i]]
        group = list(dict.fromkeys(names[i] for i in sorted(idx, key=lambda i: not base[i])))
        first = min((rank[n] for n in group if n in rank), default=None)
        if len(group) > 1 and first is not None:
            out.append((first, group, round(float(np.nansum(base[idx])), digits),
                        round(float(np.nansum(comp[idx])), digits)))
    return [g[1:] for g in sorted(out, key=lambda g: g[0])]


def name_map_text(found: list[tuple[list[str], float, float]], unit: str, digits: int) -> str:
    """The note's sentence on ``mapped_names``' groups (the first three), "" for none."""
    if not found:
        return ""
    def joined(names: list[str]) -> str:  # "a with b", "a with b and c", "a with b, c and d"
        return f"{names[0]} with {', '.join(names[1:-1]) + ' and ' if len(names) > 2 else ''}{names[-1]}"

    def fixed(v: float) -> float:  # ms a half away from zero, as the tables beside the note; MB as the memory sheet
        return half_up(v, digits) if unit == "ms" else round(v, digits) + 0.0  # + 0.0: "+0.000", not "-0.000"

    shown = [f"{joined(names)} {fixed(b):.{digits}f} {unit} -> {fixed(c):.{digits}f} {unit} together "
             f"({fixed(decimal_diff(b, c) if unit == 'ms' else c - b):+.{digits}f} {unit})"
             for names, b, c in found[:3]]
    more = f"; ... ({len(found):,} in all)" if len(found) > 3 else ""
    return "the op_name_map option pairs names that the statistic sheets, and so these rows, keep apart: " + "; ".join(
        shown) + more


def name_map_note(contrib: pd.DataFrame | None) -> str:
    """Where --op_name_map makes a listed contributor and another operator row one name (``attrs["mapped"]``), the
    pair's change together. "" otherwise."""
    return pair_notes(contrib, "operator device time", "ms", 3, "the operator level")[1]


def fallback_note(contrib: pd.DataFrame | None) -> str:
    """Where the waterfall steps stand in for a level whose rows did not change (``attrs["fallback"]``): why. ""
    otherwise."""
    return str(contrib.attrs.get("fallback") or "") if contrib is not None and len(contrib) else ""


def all_steps_note(contrib: pd.DataFrame | None) -> str:
    """Where the contributors are kernel types of a text export given a step (``attrs["all_steps"]``: each such
    side and its step), say that they are the whole profile's: KernelTypeCompare reads op_statistic.csv, which
    holds no step ids, so a kernel type changed in another step was listed as the step's contributor, with the
    only word of it on stderr. "" otherwise."""
    if contrib is None or not len(contrib):
        return ""
    sides = contrib.attrs.get("all_steps")
    if not sides:
        return ""
    why = "a text export's KernelTypeCompare reads op_statistic.csv, which holds no step ids"
    if len(sides) == 1:
        # the other side, a DB export, builds its statistic from the step's tasks: "these kernel types are the whole
        # profile's" read as both columns', where one side's whole profile is set against the other's step
        ((side, step),) = sides
        other = "comparison" if side == "base" else "base"
        return (f"the {side} side's kernel-type times are its whole profile's, not step {step}'s, set against the "
                f"{other}'s step {contrib.attrs.get('other_step', '')} alone (a DB export builds them from the step's "
                f"tasks): {why}")
    asked = ", ".join(f"{side} step {step}" for side, step in sides)
    return f"these kernel types are the whole profile's, not the step's ({asked}): {why}"


#: From this share of a side's operator device time, one top-level op of a name the other side lacks is a wrapper.
WRAPPER_SHARE = 0.9


def step_wrappers(names: list[str], amounts: tuple[np.ndarray, np.ndarray],
                  counts: tuple[np.ndarray, np.ndarray]) -> tuple[str, float, str, float] | None:
    """(base name, its amount, comparison name, its amount) where each side's amount (operator device ms,
    allocated MB) lies (WRAPPER_SHARE or more) under top-level ops of one name that the other side has no op of
    (``counts``: each side's op count per name): an annotation around the whole step named after its batch (the
    tracelens vLLM / SGLang traces: ``execute_32_context_0(...)_generation_32(...)`` against
    ``execute_8192_context_9(...)``), so the operator level pairs nothing inside. A framework op (``aten::``,
    ``autograd::``) is never one: it holds work of its own (an NPU text export links the all-reduce HCCL ops to the
    AccumulateGrad that launched them, 106.247 of its ops' 115.731 ms in level 1 rank 0, beside PARAM AlexNet's
    ``[param|cuda]`` annotation in reference pair 4). None otherwise. One rule for the time contributors
    (``operator_wrappers``) and the memory ones (``memory_summary``)."""
    if not names:
        return None
    total = [float(m.sum()) for m in amounts]
    if not (total[0] > 0 and total[1] > 0):
        return None
    top = [int(np.argmax(m)) for m in amounts]
    if top[0] == top[1] or any(names[i].startswith(checks.FRAMEWORK_PREFIXES) for i in top):
        return None
    for side, other in ((0, 1), (1, 0)):
        i = top[side]
        if amounts[side][i] < WRAPPER_SHARE * total[side] or counts[other][i] > 0:
            return None
    return names[top[0]], float(amounts[0][top[0]]), names[top[1]], float(amounts[1][top[1]])


#: ``one_sided_wrapper``'s ``two_sided`` not given: it looks for the two-sided case itself.
_UNSEEN = object()

#: From this many framework top-level ops (``aten::``, ``autograd::``), the side without a wrapper is said to have its
#: work in ops of its own, which the one-sided wrapper's single op cannot pair with (``one_sided_wrapper``).
ONE_SIDED_MIN_OPS = 10


def one_sided_wrapper(names: list[str], amounts: tuple[np.ndarray, np.ndarray],
                      counts: tuple[np.ndarray, np.ndarray], two_sided: Any = _UNSEEN
                      ) -> tuple[str, str, float, float, int] | None:
    """(side, name, its amount, the side's total, the other side's framework op count) where one side's amount lies
    (WRAPPER_SHARE or more) under top-level ops of one non-framework name the other side has no op of, and the other
    side has ONE_SIDED_MIN_OPS framework top-level ops or more: PARAM AlexNet's ``[param|cuda]`` annotation, around
    every op of reference pair 4's GPU trace, against the NPU export's 91 ``aten::`` / ``autograd::`` ops. The
    operator level then compares that op whole against nothing, and neither the op_name_map option (no op of the
    other side holds the same work) nor the max_kernel_num option (it opens pairs of two ops) reaches inside.
    ``step_wrappers`` is the two-sided case, which these options do open; None where it applies or nothing does.
    ``two_sided``: ``step_wrappers``' answer for the same rows where the caller has it."""
    if two_sided is _UNSEEN:
        two_sided = step_wrappers(names, amounts, counts) if names else None
    if not names or two_sided is not None:
        return None
    framework = np.array([n.startswith(checks.FRAMEWORK_PREFIXES) for n in names], dtype=bool)
    for side, other in ((0, 1), (1, 0)):
        total = float(amounts[side].sum())
        if not total > 0:
            continue
        i = int(np.argmax(amounts[side]))
        held = float(amounts[side][i])
        ops = int(np.nansum(counts[other][framework]))
        if (not framework[i] and held >= WRAPPER_SHARE * total and counts[other][i] == 0
                and ops >= ONE_SIDED_MIN_OPS):
            return ("base", "comparison")[side], names[i], held, total, ops
    return None


def _statistic_rows(op_rows: list[list] | None, sheets: list[Sheet]
                    ) -> tuple[list[str], tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """OperatorCompareStatistic's rows as (names, device ms per side, op count per side), as the contributors
    read them; None without rows."""
    rows = op_rows
    if rows is None:
        sheet = next((s for s in sheets if s.name == "OperatorCompareStatistic"), None)
        if sheet is None or not len(sheet):
            return None
        rows = sheet.data.iloc[:, :6].to_numpy(dtype=object).tolist()
    if not rows:
        return None
    ms = tuple(sheet_numbers([r[i] for r in rows]) for i in (2, 4))
    counts = tuple(sheet_numbers([r[i] for r in rows]) for i in (3, 5))
    return [str(r[1]) for r in rows], ms, counts  # type: ignore[return-value]


def operator_wrappers(op_rows: list[list] | None, sheets: list[Sheet]
                      ) -> tuple[tuple[str, float, str, float] | None, tuple[str, str, float, float, int] | None]:
    """(``step_wrappers``, ``one_sided_wrapper``) of the operators' device time, read from OperatorCompareStatistic's
    rows (name, device ms and op count per side) as the contributors are. Both from one read of the rows and one
    ``step_wrappers``, which the one-sided test starts with: the Summary asks for both on every run with operators,
    where two calls read the rows twice and tested the two-sided case twice."""
    found = _statistic_rows(op_rows, sheets)
    if found is None:
        return None, None
    two_sided = step_wrappers(*found)
    return two_sided, one_sided_wrapper(*found, two_sided=two_sided)


def operator_one_sided_wrapper(op_rows: list[list] | None,
                               sheets: list[Sheet]) -> tuple[str, str, float, float, int] | None:
    """``one_sided_wrapper`` of the operators' device time (``operator_wrappers``), for the match-rate check."""
    return operator_wrappers(op_rows, sheets)[1]


def one_sided_pieces(found: tuple[str, str, float, float, int]) -> tuple[str, str, str]:
    """The one-sided wrapper note (``one_sided_wrapper``'s finding) in pieces, for the console's block: the opening,
    the wrapper with its figures ("base [param|cuda] 66.195 ms, 100.0% of the side's 66.195 ms") and the advice. The
    advice is the one that works: the options the two-sided note gives leave the op whole (reference pair 4 with
    its name mapped onto an NPU op and max_kernel_num 10 kept the one row), while the transparent_op option pairs
    the ops inside by name as the trace without the annotation's event does (aten::to 55.503 -> 0.845 ms): the
    advice once said to edit that event out of the JSON, a chore on a 100 MB trace."""
    side, name, held, total, ops = found
    other = "comparison" if side == "base" else "base"
    return (f"the {side} side's operator device time lies under one top-level op that the {other} side has no op "
            f"of (an annotation around the work is one), against the {other} side's {ops:,} framework top-level ops "
            "(aten::, autograd::), so the operator level compares that op whole, against nothing, and pairs none of "
            "the ops inside it",
            f"{side} {name} {held:.3f} ms, {held / total:.1%} of the side's {total:.3f} ms",
            f"the op_name_map and max_kernel_num options compare inside a pair of two ops, and the {other} side has "
            f"no op of the same work to pair it with: to compare the ops inside, run again with the transparent_op "
            f"option, {transparent_flag(name)}, which compares them in its place, as if its event were removed from "
            "the trace (they are then top-level ops, compared by name)")


def wrapped_match_hint(found: tuple[str, str, float, float, int]) -> str:
    """The operator match-rate check's advice where ``one_sided_wrapper`` holds, in place of "different models? try
    the op_name_map option" (``operators.low_match_hint``), which that option cannot follow: what the rate counts,
    and the advice of the note under the contributors (``one_sided_pieces``), said here too since a run without
    the contributors' table (an operator comparison alone) has no note."""
    side, name, held, total, _ = found
    other = "comparison" if side == "base" else "base"
    return (f"the {side} side's operator device time lies under {name} ({held / total:.1%}), one top-level op that "
            f"the {other} side has no op of, so none of the ops inside it is paired: to compare them, run again with "
            f"the transparent_op option: {transparent_flag(name)}")


def one_sided_memory_note(found: tuple[str, str, float, float, int] | None) -> str:
    """The memory contributors' counterpart of the one-sided wrapper note (``one_sided_wrapper`` of the allocated
    MB): the memory sheets pair the operators as the operator level does, so they too compare the op whole against
    nothing, and the transparent_op option, which opens it for that one pairing, compares the ops inside in both;
    "" without a finding."""
    if not found:
        return ""
    side, name, held, total, ops = found
    other = "comparison" if side == "base" else "base"
    return (f"the {side} side's allocated memory lies under one top-level op that the {other} side has no op of "
            f"({side} {name} {held:.2f} MB, {held / total:.1%} of the side's {total:.2f} MB), against the {other} "
            f"side's {ops:,} framework top-level ops (aten::, autograd::): the memory sheets pair the operators as "
            "the operator level does, so they compare that op whole, against nothing, and pair none of the ops "
            f"inside it: to compare them, run again with the transparent_op option, {transparent_flag(name)}")


def transparent_flag(name: str) -> str:
    """``--transparent_op`` with ``name`` quoted for a POSIX shell, to be pasted as it is (``[param|cuda]`` holds a
    pipe and a glob): where the advice said to remove the op's event from the trace, a chore on a 100 MB JSON, the
    option does it. A name the shell reads bare is quoted all the same: ``compare()``'s log words a flag with a
    quoted value as the keyword (``Face.words``), and a bare one came out as ``transparent_op model.forward``, no
    Python; ``'model.forward'`` reads alike in both."""
    return f"--transparent_op {shell_word(name)}"


def one_sided_note(contrib: pd.DataFrame | None) -> str:
    """The one-sided wrapper note, one line, where the contributors carry ``attrs["one_sided_wrapper"]``; ""
    otherwise."""
    if contrib is None or not len(contrib) or not contrib.attrs.get("one_sided_wrapper"):
        return ""
    opening, item, advice = one_sided_pieces(contrib.attrs["one_sided_wrapper"])
    return f"{opening} ({item}): {advice}"


def wrapper_text(found: tuple[str, float, str, float], what: str, unit: str, digits: int, table: str,
                 details_off: bool = False, mapped: bool = False) -> str:
    """The wrapper note's sentence for ``step_wrappers``' finding: ``what`` lies under the two wrappers (figures
    in ``unit`` to ``digits`` decimals), so ``table`` compares the two, not the ops inside; --op_name_map pairs
    the names, and --max_kernel_num drills into the pair (the operator pairing, which the memory sheets share).
    ``details_off`` (a --disable_details run, which pairs no operator, so both options change nothing) adds that
    the advice needs a run without it. ``mapped``: the run's --op_name_map pairs the two already (the statistic
    sheets keep a row per name all the same), so only --max_kernel_num is left to give: advising the entry the
    user gave read as if it had not been taken."""
    opening, items, advice = wrapper_pieces(found, what, unit, digits, table, details_off, mapped)
    # the sentence names each side's wrapper with its figure at the head of the parenthesis (the opening has no name
    # in it, so the replace finds its own words)
    return opening.replace(_ASIDE, f"({items[0]}, {items[1]}; {_ASIDE[1:]}", 1) + f": {advice}"


#: The parenthesis of ``wrapper_pieces``' opening, which ``wrapper_text`` opens with each side's wrapper.
_ASIDE = "(an annotation around the step, named after its batch, is one)"


def wrapper_pieces(found: tuple[str, float, str, float], what: str, unit: str, digits: int, table: str,
                   details_off: bool = False, mapped: bool = False) -> tuple[str, list[str], str]:
    """``wrapper_text`` in pieces, for the console's block (``contributors_note_lines``): the opening ("each side's
    ... (an annotation around the step, named after its batch, is one), so ... not the ops inside them"), each
    side's wrapper with its figure ("base NAME 10.718 ms"), and the advice. The tracelens vLLM pair's wrappers are
    100-character batch names, and the sentence was one console line of 772 characters."""
    nb, vb, nc, vc = found
    # options named bare: the result's text, read by compare()'s caller as by the CLI's user
    # "pairs them already" beside a row reading base 0.000 -> the comparison's whole figure (vLLM's capture
    # traces, memory: capture_8192_PIECEWISE 0.00 -> 20764.11 MB) read as a map not taken: say where it pairs them
    advice = ("the op_name_map option pairs them already, in the detail sheets only (the statistic sheets, which "
              "these rows come from, keep a row per name): to compare inside, set the max_kernel_num option to 10"
              if mapped else
              f"to pair them and compare inside, give the op_name_map option the entry {nb!r}: {nc!r} (beside any it "
              "holds) and set the max_kernel_num option to 10")
    return (f"each side's {what} lies under one top-level op that the other side has no op of {_ASIDE}, so {table} "
            "compares these two, not the ops inside them",
            [f"base {nb} {vb:.{digits}f} {unit}", f"comparison {nc} {vc:.{digits}f} {unit}"],
            advice + (" in a run without the disable_details option (which pairs no operator, so neither option "
                      "changes a sheet)" if details_off else ""))


def split_wrapper_pair(contrib: pd.DataFrame, op_name_map: Mapping[str, str]) -> None:
    """Where the contributors' wrappers (``attrs["wrappers"]``) are one name under ``op_name_map``, mark them so
    (``attrs["wrappers_mapped"]``: the wrapper note then asks for --max_kernel_num alone) and drop their group from
    ``attrs["mapped"]``: the wrapper note gives both figures, and a second sentence on the same two names, with the
    same figures, only repeated them."""
    found = contrib.attrs.get("wrappers")
    if not found or not op_name_map:
        return
    nb, nc = found[0], found[2]
    if op_name_map.get(nb, nb) != op_name_map.get(nc, nc):
        return
    contrib.attrs["wrappers_mapped"] = True
    groups = [g for g in contrib.attrs.get("mapped", []) if set(g[0]) != {nb, nc}]
    if groups:
        contrib.attrs["mapped"] = groups
    else:
        contrib.attrs.pop("mapped", None)


def wrapper_note(contrib: pd.DataFrame | None) -> str:
    """Say where the operator-level contributors are two wrappers (``operator_wrappers``, kept in the contributors'
    ``attrs["wrappers"]``): their table then shows one side's step appearing and the other's vanishing, which
    says nothing of the ops inside; --op_name_map pairs the two names, and --max_kernel_num drills into a pair.
    "" otherwise."""
    return pair_notes(contrib, *_TIME_WRAPPER)[0]


#: ``wrapper_text``'s words and figures for the time contributors (``wrapper_note``).
_TIME_WRAPPER = ("operator device time", "ms", 3, "the operator level")


def mark_pairs(ctx: RunContext, contrib: pd.DataFrame, rows: tuple[list[str], np.ndarray, np.ndarray] | None,
               wrappers: tuple[str, float, str, float] | None) -> None:
    """Set the contributors' attrs that ``pair_notes`` reads, for the time and the memory contributors alike:
    ``mapped`` (``mapped_names`` of the statistic ``rows``: names, base and comparison figures), ``wrappers``
    (``step_wrappers``' finding) with ``details_off``, then ``split_wrapper_pair``, which reads ``mapped``."""
    name_map = paired_names_map(ctx)
    mapped = mapped_names(*rows, contrib, name_map, 6) if rows is not None else []
    if mapped:
        contrib.attrs["mapped"] = mapped
    if wrappers is not None:
        contrib.attrs["wrappers"] = wrappers
        contrib.attrs["details_off"] = ctx.options.disable_details
        split_wrapper_pair(contrib, name_map)


def pair_notes(contrib: pd.DataFrame | None, what: str, unit: str, digits: int, table: str) -> tuple[str, str]:
    """(the wrapper note, the --op_name_map note) of contributors marked by ``mark_pairs``, each "" where it does
    not apply: the time and the memory contributors word them alike, with their own figures (``wrapper_text``'s
    ``what``, ``unit``, ``digits``, ``table``)."""
    if contrib is None or not len(contrib):
        return "", ""
    found, mapped = contrib.attrs.get("wrappers"), contrib.attrs.get("mapped")
    wrapper = wrapper_text(found, what, unit, digits, table, bool(contrib.attrs.get("details_off")),
                           bool(contrib.attrs.get("wrappers_mapped"))) if found else ""
    return wrapper, name_map_text(mapped, unit, digits) if mapped else ""


#: A contributor is said to hold communication where its communication changed by this share of its diff or more.
COMM_SHARE = 0.5
#: What the communication inside an operator is, by the kinds of the sides that hold some (the frame
#: "contributor_communication"'s ``attrs["kinds"]``: each side's kind; a side with a figure holds some).
COMM_HELD = {
    "": "HCCL ops, which an NPU text export links to the operator that launched them",
    "GPU": "collective kernels (NCCL / RCCL), which the trace's launch flows link to the operator that launched them",
    "GPU+NPU": "HCCL ops and collective kernels (NCCL / RCCL), which an NPU text export and a GPU trace's launch flows "
               "link to the operator that launched them",
}
#: What HCCL is, for a run with a GPU side whose note names HCCL ops alone: a user who moved a job from GPU to NPU
#: read "HCCL ops" beside a GPU trace's 0 ms of NCCL without the word that pairs them.
HCCL_GLOSS = "HCCL ops (HCCL: the NPU's collective communication library, as NCCL on a GPU)"


def _joined(pieces: tuple[str, ...] | None) -> str:
    """``_communication_pieces`` as the one-line note says them: "what (why): figures" ("" for none)."""
    return f"{pieces[0]} ({pieces[1]}): {pieces[2]}" if pieces else ""


def _communication_pieces(contrib: pd.DataFrame | None, comm: pd.DataFrame | None,
                          waterfall: bool = True) -> tuple[str, str, str] | None:
    """The communication note, which names the listed operator contributors whose change is mostly collective
    communication launched inside them, in pieces: what holds communication, why (what the figures count), the
    figures; the console says the why as a sentence of its own (``_sentences``). An NPU text export links each
    HCCL op to the operator that launched it (an all-reduce under ``AccumulateGrad``'s DDP hook), so such an
    operator's device time holds the collective, which the waterfall counts as communication (uncovered where no
    computing overlaps it), not as the operator's computing; a run without a ``waterfall`` (operators alone: no
    time breakdown) is not told what its waterfall counts. None where no contributor holds it."""
    if contrib is None or not len(contrib) or comm is None or not len(comm):
        return None
    # the columns through col_of: a frame's Series deep-copies its attrs (the notes' figures) on every pull
    held = dict(zip(col_of(comm, "Name").tolist(), zip(col_of(comm, "Base(ms)").tolist(),
                                                       col_of(comm, "Comparison(ms)").tolist(), strict=True),
                    strict=True))
    kinds = comm.attrs.get("kinds", ("NPU", "NPU"))  # each side's kind, GPU or NPU
    holds = comm.attrs.get("held", (True, True))  # whether each side holds collective communication at all
    said: list[tuple[str, str]] = []
    for name, diff in zip(col_of(contrib, "Name").tolist(), col_of(contrib, "Diff(ms)").tolist(), strict=True):
        if name not in held:
            continue
        b, c = held[name]
        # a side that links no collective to an operator (a DB export, a GPU trace of one rank) has no figure: the
        # whole of the other side's communication is then inside this contributor's change only
        if diff and ((0.0 if pd.isna(c) else c) - (0.0 if pd.isna(b) else b)) / diff >= COMM_SHARE:
            said.append((name, _communication_figures(b, c, kinds, holds)))
    if not said:
        return None
    # the kinds of communication the said contributors hold: a GPU trace without collective kernels reads 0 ms and
    # holds none; nor does a side whose collectives are under other ops (a GPU inference trace's NCCL kernels under
    # its step annotation, beside an NPU export's all-reduce under AccumulateGrad, read "HCCL ops and collective
    # kernels" of an AccumulateGrad of 0 ms on the GPU side)
    inside = [held[n] for n, _ in said]
    recorded = {k for k, figs, h in zip(kinds, zip(*inside, strict=True), holds, strict=True)
                if h and any(not pd.isna(f) and f > 0 for f in figs)}
    if not recorded:  # no figure above 0 (cannot be, as the change is mostly communication): what the sides record
        recorded = {k for k, col, h in zip(kinds, ("Base(ms)", "Comparison(ms)"), holds, strict=True)
                    if h and pd.notna(col_of(comm, col)).any()}
    counted = "; the waterfall counts them as communication, not computing" if waterfall else ""
    held_by = COMM_HELD['GPU+NPU' if len(recorded) == 2 else 'GPU' if recorded == {'GPU'} else '']
    if "GPU" in kinds and held_by == COMM_HELD[""]:
        held_by = held_by.replace("HCCL ops", HCCL_GLOSS, 1)
    why = f"{held_by}{counted}"
    if len(said) == 1:
        return f"most of the change of {said[0][0]} is collective communication launched inside it", why, said[0][1]
    return (f"most of the change of {len(said):,} listed contributors is collective communication launched inside them",
            why, ", ".join(f"{n}: {s}" for n, s in said))


def net_of_communication(contrib: pd.DataFrame | None, comm: pd.DataFrame | None) -> list[tuple[str, float]]:
    """The operators ranked by their device-time change net of the collective communication inside them (the frame
    "contributor_communication"'s ``attrs["net"]``: ``summary.net_changes``), where a listed contributor's change is
    mostly that communication (``_communication_pieces``) and the cut left one of them out: an NPU text export's
    all-reduce under AccumulateGrad (+106 ms against a GPU trace) was the only contributor, and the NPU's slower
    computing (the optimizer's step, its _foreach_add_) was in no text. [] otherwise; the regression gate does not
    read it."""
    if comm is None or not _communication_pieces(contrib, comm):
        return []
    net = list(comm.attrs.get("net") or [])
    listed = set(col_of(contrib, "Name").tolist())
    return net if any(n not in listed for n, _ in net) else []


def net_of_communication_note(contrib: pd.DataFrame | None, comm: pd.DataFrame | None) -> str:
    """``net_of_communication`` as the note's last part, figures as the table's ("" for none); one operator in the
    singular (level-1 rank 1 -> rank 0 text exports name aten::to alone: "the operators ... are aten::to")."""
    net = net_of_communication(contrib, comm)
    if not net:
        return ""
    lead = "the operators whose device time changed most are " if len(net) > 1 else \
        "the operator whose device time changed most is "
    return ("net of the collective communication inside them, " + lead
            + ", ".join(f"{n} {half_up(ms, 3):+.3f} ms" for n, ms in net))


def _communication_moved(ns: int, wf: pd.DataFrame) -> bool:
    """Whether a change of communication time (ns) is worth a sentence: it shows at the 0.001 ms written and is
    ``NAMED_STEP_SHARE`` of the E2E change or more, as a waterfall step the note names."""
    e2e = int(wf["Delta(ns)"].iloc[-1]) if len(wf) else 0
    return abs(ns) >= max(500, NAMED_STEP_SHARE * abs(e2e))


def wait_split_note(contrib: pd.DataFrame | None, wf: pd.DataFrame | None) -> str:
    """How the communication groups' uncovered time changed between Wait and Transmit (the contributors'
    ``attrs["wait_split"]``: ``overall.wait_split``, set only where both sides' Wait is measured), where that time
    moved by ``_communication_moved``'s share of the E2E change; "" otherwise. DB level 2 -> level 1, rank 0:
    uncovered communication +7.991 ms, of which Wait +2.670 ms (0.006 -> 2.676 ms) and Transmit +5.321 ms, which
    only OverallMetrics' rows and the console's "(0.003s)" cell told; a rank that waits longer waits for a slower
    peer, which its own profile cannot name, so the words send the reader to the other ranks."""
    split = None if contrib is None else contrib.attrs.get("wait_split")
    if split is None or wf is None or not len(wf):
        return ""
    (wb, wc), (tb, tc) = split
    total = (wc + tc) - (wb + tb)
    if not _communication_moved(total, wf):
        return ""
    # the figures, then what Wait and Transmit are, a sentence each: inside the figures' sentence, as parentheses,
    # the words made it 370 characters, the figures far apart (``_sentences`` gives each its own line)
    return (f"of the communication groups' uncovered time ({ms3(total):+.3f} ms), Wait changed by "
            f"{ms3(wc - wb):+.3f} ms, {ms3(wb):.3f} ms -> {ms3(wc):.3f} ms, and Transmit by "
            f"{ms3(tc - tb):+.3f} ms, {ms3(tb):.3f} ms -> {ms3(tc):.3f} ms (OverallMetrics' Wait and Transmit rows"
            f"{_overall_absent(contrib)}). {WAIT_WORDS}. {TRANSMIT_WORDS}")


def _absent_sheets(absent: list[tuple[str, str]]) -> str:
    """"; this run writes no <sheet>: the <option> option adds it" for the (sheet, option) pairs of sheets the notes
    name that the run leaves out (the contributors' ``attrs["communication_sheets"]``), "" for none."""
    if not absent:
        return ""
    many = len(absent) > 1
    return (f"; this run writes no {' and no '.join(s for s, _ in absent)}: the {' and '.join(o for _, o in absent)} "
            f"option{'s add them' if many else ' adds it'}")


def _overall_absent(contrib: pd.DataFrame) -> str:
    """``_absent_sheets`` of OverallMetrics alone: a run with the gate and without the time-breakdown comparison
    makes a breakdown for the gate, whose notes send the reader to OverallMetrics' rows, and writes no such sheet."""
    return _absent_sheets([a for a in contrib.attrs.get("communication_sheets") or [] if a[0] == "OverallMetrics"])


#: What a communication group's Wait is, and where to look for its cause (``wait_split_note``): a collective ends when
#: its last rank arrives, so the rank the others waited for is the one that waited least.
WAIT_WORDS = ("Wait is this rank waiting in its collectives for slower peers: the rank-by-rank compare of the job's "
              "ranks gives each rank's Wait, and the slowest rank waits least")
#: What a communication group's Transmit is (``wait_split_note``).
TRANSMIT_WORDS = "Transmit is moving the data: more data, or a slower link"
#: The sentences that a part of the note holds after its first, each opened by these words after ". ": the console,
#: the Summary sheet and the gate give each a line of its own (``_sentences``).
SENTENCE_OPENINGS = (WAIT_WORDS, TRANSMIT_WORDS)


def unsplit_communication_note(contrib: pd.DataFrame | None, wf: pd.DataFrame | None, beside: bool = False) -> str:
    """Where the communication comparison wrote no CommunicationCompare because no side's communication ops have a
    family to group them by (the contributors' ``attrs["communication_unsplit"]``: per side, how many ops lack one,
    what they hold instead and whether the export is a Level0 one), the uncovered communication's change (the
    waterfall's communication steps) and why no sheet breaks it down by op; "" otherwise, and where that change does
    not show. Two Level0 DB exports (rank 0 -> rank 1): communication +4.120 ms, 83.8 % of the E2E change, and the
    Summary gave no communication line and no word of why (one side without op rows gets the line's). ``beside``
    (as ``_unexplained_parts``'): the waterfall's rows above give that change and its share, which the words leave
    out."""
    sides = None if contrib is None else contrib.attrs.get("communication_unsplit")
    if not sides or wf is None or not len(wf):
        return ""
    cat = col_of(wf, "Category", object)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    moved = int(delta[cat == "communication"].sum())
    if abs(moved) < 500:
        return ""
    e2e = int(delta[-1])
    share = "" if not e2e else f", {moved / e2e:.1%} of the E2E change" if moved / e2e > 0 else \
        f", against an E2E change of {ms3(e2e):+.3f} ms"
    held = [(side, n, why, level0) for side, (n, why, level0) in zip(("base", "comparison"), sides, strict=True) if n]
    def counted(n: int) -> str:  # "4 communication ops have", "1 communication op has"
        return f"{n:,} communication op{'s have' if n > 1 else ' has'}"

    if len(held) == 2 and held[0][2] == held[1][2]:
        n_b, n_c = held[0][1], held[1][1]
        ops = f"each side's {counted(n_b)}" if n_b == n_c else \
            f"the base side's {n_b:,} and the comparison side's {counted(n_c)}"
        ops += f" {held[0][2]}"
    else:
        ops = " and ".join(f"the {side} side's {counted(n)} {why}" for side, n, why, _ in held)
    if all(level0 for *_, level0 in held) and all(why.startswith("an op type of N/A") for _, _, why, _ in held):
        ops += " (a Level0 export records no op type)"
    if len(held) == 1:
        ops += f"; the {'comparison' if held[0][0] == 'base' else 'base'} side has no communication op"
    what = ("no sheet breaks the change of uncovered communication (the waterfall's communication steps) down by op"
            if beside else f"uncovered communication (the waterfall's communication steps) changed by "
            f"{ms3(moved):+.3f} ms{share}, which no sheet breaks down by op")
    return (f"{what}: {ops}, so CommunicationCompare has no family to group them by and is not written; OverallMetrics "
            f"gives it by communication group{_overall_absent(contrib)}")


def communication_kernels_note(contrib: pd.DataFrame | None) -> str:
    """The kernel contributors that are collective communication (the contributors' ``attrs["communication_kernels"]``:
    kernel_details.csv rows of HCCL ops, ``breakdown_npu.hccl_op_rows``), as the note marks the operators that hold
    it (``_communication_pieces``): a kernel-only run's top contributor ``hcom_allReduce_`` (+6.019 ms of +6.187 ms,
    text level 2 -> level 1) read as a kernel like the others. ``attrs["communication_sheets"]``: the sheets that
    break communication down that the run leaves out; "" without such a contributor."""
    names = [] if contrib is None else list(contrib.attrs.get("communication_kernels") or [])
    if not names:
        return ""
    one = len(names) == 1
    what = f"{names[0]} is" if one else f"{', '.join(names[:-1])} and {names[-1]} are"
    missing = _absent_sheets(list(contrib.attrs.get("communication_sheets") or []))
    # a kernel type (KernelTypeCompare) is op_statistic.csv's row of every HCCL op of that type
    types = str(col_of(contrib, "Level")[0]) == "kernel type"
    # what marked them (``summary._communication_kernels``): the core as the file writes it (newer torch_npu:
    # COMMUNICATION, which "(Accelerator Core HCCL)" misread), else the hcom_ name
    by = " or ".join(contrib.attrs.get("communication_kernels_by") or
                     ["Core Type HCCL" if types else "Accelerator Core HCCL"])
    listed = (f"HCCL ops, which op_statistic.csv lists among the kernel types ({by})" if types else
              f"{'an HCCL op' if one else 'HCCL ops'}, which kernel_details.csv lists among the kernels ({by})")
    return (f"{what} collective communication, not computing: {listed}; the time breakdown (OverallMetrics, "
            f"the waterfall) counts {'it' if one else 'them'} as communication and CommunicationCompare breaks "
            f"{'it' if one else 'them'} down by task{missing}")


#: Why a GPU side's communication inside an operator is null: its collective kernels are linked to no operator.
GPU_UNRECORDED = "its trace's launch flows link none of its collective kernels to an operator"
#: Why an NPU side's communication inside an operator is null where it holds HCCL ops: a DB export links none.
NPU_UNLINKED = "its export links no HCCL op to an operator"
#: Why an NPU side's communication inside an operator is null where it holds none at all (a trace_view.json of a
#: run on one device): "links no HCCL op" read as a link the export had lost.
NPU_NO_HCCL = "its export holds no HCCL op"
#: Why a GPU side's communication inside an operator is 0 ms, a reading: it ran none.
GPU_NO_COLLECTIVES = "trace holds no NCCL / RCCL or other collective kernel"


def _communication_figures(base: float, comparison: float, kinds: tuple[str, str] = ("NPU", "NPU"),
                           held: tuple[bool, bool] = (True, True)) -> str:
    """"communication 1.000 ms -> 2.000 ms", or with "not recorded" (as the communication line says it) for a side
    whose figure is null: it links no collective to an operator, so its 0 would read as a fall of the communication
    that its own CommunicationCompare column shows. The reason names what that side lacks, by its own kind: an
    NPU export links no HCCL op (a DB export) or holds none (a trace of one device), a GPU trace links none (no
    launch flows); a GPU side beside an NPU side was said to link no HCCL op, which no GPU trace has. A GPU trace
    without any collective kernel (one rank) ran no communication: its 0 ms is a reading, as the communication line
    says, and the reason is given. Each figure (whole ns / 1e6) is rounded a half away from zero (``half_up``), as
    every ms of the Summary: ``{:.3f}`` of the float read 7.6335 ms (7633.5 us) as 7.633."""
    if not pd.isna(base) and not pd.isna(comparison):
        text = f"communication {half_up(base, 3):.3f} ms -> {half_up(comparison, 3):.3f} ms"
        none = [side for side, k, h in zip(("base", "comparison"), kinds, held, strict=True) if k == "GPU" and not h]
        return text + (f" (the {none[0]} side's {GPU_NO_COLLECTIVES})" if len(none) == 1 else "")
    side = 0 if pd.isna(base) else 1
    why = GPU_UNRECORDED if kinds[side] == "GPU" else NPU_UNLINKED if held[side] else NPU_NO_HCCL
    # the reason beside the side it is of, as the memory line's: after the other side's figure its "its" read as
    # that side's ("comparison 105.992 ms (its export holds no HCCL op)" of a base side without any)
    sides = ", ".join(f"{name} {f'not recorded ({why})' if pd.isna(v) else f'{half_up(v, 3):.3f} ms'}"
                      for name, v in (("base", base), ("comparison", comparison)))
    return f"communication: {sides}"


def _unexplained(contrib: pd.DataFrame | None, wf: pd.DataFrame | None, beside: bool = False) -> str:
    """Where the operators (modules, kernels) together explain under half of the E2E change, say so: their
    device time holds no free time, and in a DB export no communication, so ranking them would point at
    a few µs of an 8 ms regression. Where they changed by twice the E2E change or more, say that too: a
    contributor of -106 ms beside an E2E change of -7.4 ms is no explanation of it either. The waterfall
    ``wf`` holds the E2E change (its end row) and names the steps that hold the rest; without one (a side has
    no E2E time, so the E2E change is not a change of time) there is no note. "" otherwise. ``beside``: as
    ``_unexplained_parts``'."""
    if contrib is None or not len(contrib) or wf is None or not len(wf):
        return ""
    e2e_delta_ns = int(wf["Delta(ns)"].iloc[-1])  # the "Comparison E2E" row: comparison E2E - base E2E
    if not e2e_delta_ns:
        return ""
    level = str(col_of(contrib, "Level")[0])
    if level == "category":  # the waterfall steps themselves: they are the E2E change
        return ""
    net, e2e = level_net_ms(contrib), e2e_delta_ns / 1e6
    copies = (contrib.attrs.get("idle_evidence") or {}).get("copies")
    note = _net_note(level, net, e2e, wf, e2e_delta_ns, bool(contrib.attrs.get("api_sheet", True)),
                     contrib.attrs.get("export_window"), beside, copies)
    return note + _shares_basis(contrib, net) if note else ""


def _idle_next(named: str, e2e: float, api_sheet: bool = True, wf: pd.DataFrame | None = None,
               window: ExportWindow | None = None, beside: bool = False,
               copies: tuple[int, int] | None = None) -> str:
    """Where Free: Other leads the steps that hold most of the E2E change, what it is and where to look next, else
    "". Two runs of one ResNet-50 (torch-tb-profiler samples) differ by -120 ms, -119.8 ms of it Free: Other: the
    note named the step and stopped, while ApiCompare shows the single-process DataLoader's __next__ 143 ms quicker,
    the host work the device had waited for. ``api_sheet``: whether the run writes ApiCompare (the contributors'
    ``attrs["api_sheet"]``, set by the Summary comparator). ``window``: a DB export's side and the ns of device
    tasks outside its computing and communication that its Free: Other holds beside a text export, which holds
    none (``verdict.export_window``): where Free: Other is named, first or second, they are taken out of the step's
    change (``wf``) before it is read as idle time (``window_words``). Text level 1 -> DB level 1, rank 0: Free:
    Other +5.200 ms read "the device waited longer for work", of which 5.686 ms are the DB export's window tasks,
    so the device idled 0.486 ms less; text Level0 -> DB Level0, rank 0, named Free: Other +4.210 ms second, after
    communication, and said nothing of its 4.217 ms of window tasks. ``beside``: as ``_unexplained_parts``'.
    ``copies``: ``free_other_copies`` (``free_other_is``)."""
    leads = named.startswith(f"{FREE_OTHER_STEP} ")
    if window is not None and wf is not None and (leads or f" and {FREE_OTHER_STEP} " in named):
        delta = int(wf["Delta(ns)"].to_numpy()[wf["Step"].to_numpy() == FREE_OTHER_STEP][0])
        return f"; {window_words(delta, window, leads, api_sheet, beside)}"
    if not leads:
        return ""
    return (f"; {FREE_OTHER_STEP} is {free_other_is(copies)}: "
            f"{_idle_words(e2e > 0, api_sheet, ' or to load its data')}")


def window_words(delta: int, window: ExportWindow, read: bool, api_sheet: bool = True,
                 beside: bool = False) -> str:
    """Free: Other's change (``delta``, ns) beside a DB export's time outside its computing and communication's span
    (``window``: ``verdict.export_window``), said net of it: what the step holds, then the idle time's change, and
    with ``read`` what it means (``_idle_words``, by its own sign): where the step leads the change, as where no
    window is taken out. All of that time is taken out, its copies and its idle time alike: a text export's window
    starts at its first computing or communication and ends at its last, so it holds neither. ``beside``: the E2E
    line above says what it holds (``verdict.export_aside``), so the words give its figure and place alone, where on
    their own they say what it holds (as ``_unexplained_parts``)."""
    side, outside = window.side, window.ns
    idle = delta - outside if side == "comparison" else delta + outside
    if beside:
        held = (f"{FREE_OTHER_STEP} is device idle time and also the {side} side's {window.where()}, which the E2E "
                "line names")
    else:
        held = (f"{FREE_OTHER_STEP} is device idle time and, on the {side} side (a DB export), also its "
                f"{window.held()}, which a text export's E2E leaves out")
    if not ms3(idle):
        return f"{held}; net of that time, the device idled as long as before"
    if not read:
        return f"{held}; net of that time, the idle time changed by {ms3(idle):+.3f} ms"
    return (f"{held}; net of that time, the idle time changed by {ms3(idle):+.3f} ms: "
            f"{_idle_words(idle > 0, api_sheet, ' or to load its data')}")


def _idle_words(longer: bool, api_sheet: bool, also: str = "") -> str:
    """What a change of device idle time means and where to look: one wording for ``unchanged_why`` and
    ``_idle_next`` (``also``: another host task it may wait on)."""
    return (f"the device waited {'longer' if longer else 'less'} for work, as where the host was "
            f"{'slower' if longer else 'quicker'} to launch it{also}; ApiCompare times the host calls"
            + ("" if api_sheet else API_SHEET_ABSENT))


#: Free: Other is explained from this rank among the waterfall's steps by the size of their change (1: the largest).
IDLE_STEP_RANK = 2
#: ... and where its change is this share of the longer side's E2E time or more: two runs of one job (the NPU level-1
#: and level-2 exports) differ by 0.711 ms of Free: Other in 136 ms, no finding, where the H200 AlexNet against the
#: NPU run grows it by 17.902 ms (13 %).
IDLE_RUN_SHARE = 0.05


#: Free: Other's copies are named beside its idle time where they are this share of one side's Free: Other or more
#: and changed by 0.001 ms or more: the H200 AlexNet's 0.015 ms (0.2 %) against the NPU text export's 0.011 ms, or
#: 0.842 ms a side where a host delay grew the idle time alone, only lengthened the note
FREE_COPIES_SHARE = 0.01


def free_other_copies(pair: tuple[Any, Any] | None) -> tuple[int, int] | None:
    """Per side (base, comparison), the ns of Free: Other that is no idle stretch: the copies outside computing and
    communication that no SDMA row counts (a GPU's copies off its compute stream, PyTorch 1.8's Memcpy events, a DB
    export's MEMCPY_ASYNC tasks), which the idle stretches leave out (``Breakdown.set_window``). None without both
    time breakdowns, where on each side they are under ``FREE_COPIES_SHARE`` of its Free: Other, and where they
    changed by under 0.001 ms (the step's change is then idle time)."""
    if pair is None or any(bd.e2e_ns <= 0 for bd in pair):
        return None
    other = [bd.free_ns - bd.sdma_stream.ns for bd in pair]
    b, c = (max(0, o - bd.idle_stretches.ns) for o, bd in zip(other, pair, strict=True))
    if not ms3(c - b) or all(n < FREE_COPIES_SHARE * o for n, o in ((b, other[0]), (c, other[1]))):
        return None
    return b, c


def free_other_is(copies: tuple[int, int] | None) -> str:
    """What Free: Other is, where a note reads its change as the device waiting: device idle time, and the copies it
    holds where there are any to name (``free_other_copies``), with their figures. The idle check leaves copies out
    of idle time, so "Free: Other is device idle time" read 0.842 -> 0.889 ms of a DB export's MEMCPY_ASYNC tasks and
    10.085 -> 9.282 ms of a PyTorch 1.8 trace's Memcpy events as the device waiting."""
    if copies is None:
        return "device idle time"
    return (f"device idle time and copies that no SDMA row counts ({ms3(copies[0]):.3f} ms -> "
            f"{ms3(copies[1]):.3f} ms)")


def idle_evidence(pair: tuple[Any, Any] | None, ops: tuple[pd.DataFrame, pd.DataFrame]) -> dict[str, Any] | None:
    """What the profiles hold on their device idle time, for ``idle_growth_note``: per side (base, comparison) the
    idle stretches of the E2E window, the longest, and the host's sync calls that start in that window
    (``api_stats.host_syncs``, from the sides' ``ops``); None without both time breakdowns. ``pair``: the two
    ``Breakdown``s."""
    if pair is None or any(bd.e2e_ns <= 0 for bd in pair):
        return None
    from .api_stats import host_syncs

    syncs = []
    for bd, side_ops in zip(pair, ops, strict=True):
        lo = bd.longest_idle.start_ns - bd.longest_idle.offset_ns
        syncs.append(host_syncs(side_ops, lo, lo + bd.e2e_ns))
    return {"stretches": tuple((bd.idle_stretches.count, bd.idle_stretches.ns) for bd in pair),
            "copies": free_other_copies(pair),
            "longest": tuple(bd.longest_idle.length_ns for bd in pair),
            "syncs": tuple(syncs)}


def idle_growth_note(contrib: pd.DataFrame | None, wf: pd.DataFrame | None, said: list[str] | None = None) -> str:
    """Where Free: Other moved with the E2E change by ``NAMED_STEP_SHARE`` of it and ``IDLE_RUN_SHARE`` of the longer
    E2E or more, and is among the waterfall's ``IDLE_STEP_RANK`` largest steps, what that idle time is
    (``_idle_words``) and what the profiles hold on it (``contrib.attrs["idle_evidence"]``, ``idle_evidence``): the
    idle stretches and the longest (one stall or many short waits) and the host's sync calls, after which the device
    idles until the host launches more. The H200 AlexNet against the NPU's level-1 export grew Free: Other by
    17.902 ms, the second step after the all-reduce, and no line said what it was: the note on it came only where
    the operators explain under half of the E2E change (``_idle_next``). "" where a note in ``said`` (the other
    parts) calls it idle time already, where the verdict says an idle stretch makes most of the difference
    (``attrs["idle_explained"]``), and beside a DB export's window tasks (``attrs["export_window"]``), which
    ``_idle_next`` takes out of the step."""
    # a DB export's window tasks beside a text export's are in its Free: Other too (``_idle_next`` nets them out)
    if contrib is None or wf is None or not len(wf) or contrib.attrs.get("idle_explained") or \
            contrib.attrs.get("export_window"):
        return ""
    evidence = contrib.attrs.get("idle_evidence")
    if evidence is None or any("device idle time" in p for p in said or []):
        return ""
    e2e = int(wf["Delta(ns)"].iloc[-1])
    step = step_mask(wf)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    steps = col_of(wf, "Step", object)
    at = np.flatnonzero(step & (steps == FREE_OTHER_STEP))
    if not e2e or not at.size:
        return ""
    free = int(delta[at[0]])
    rank = 1 + int(np.count_nonzero(step & (np.abs(delta) > abs(free))))
    longer_e2e = max(int(wf["Base(ns)"].iloc[0]), int(wf["Comparison(ns)"].iloc[-1]))
    if free * e2e <= 0 or abs(free) < max(NAMED_STEP_SHARE * abs(e2e), IDLE_RUN_SHARE * longer_e2e, 500) or \
            rank > IDLE_STEP_RANK:
        return ""
    (b_n, b_idle), (c_n, c_idle) = evidence["stretches"]
    b_long, c_long = evidence["longest"]
    longer = free > 0
    longest_change = c_long - b_long
    # one stretch that holds half of the change or more is a stall; else the idle time is spread over the gaps
    shape = ("most of it one stretch, a stall" if longest_change * free > 0 and 2 * abs(longest_change) >= abs(free)
             else "spread over the gaps between kernels, not one stall")
    mean = [ms3(ns // n if n else 0) for n, ns in ((b_n, b_idle), (c_n, c_idle))]
    parts = [f"stretches with {checks.IDLE_WHAT} {b_n:,} -> {c_n:,}, {mean[0]:.3f} ms -> "
             f"{mean[1]:.3f} ms long on average, the longest {ms3(b_long):.3f} ms -> {ms3(c_long):.3f} ms "
             f"(validity check: longest idle stretch): {shape}"]
    (b_calls, b_ns), (c_calls, c_ns) = evidence["syncs"]
    if b_calls or c_calls:
        names = list(dict.fromkeys([n for n, _ in b_calls] + [n for n, _ in c_calls]))
        counts = [sum(k for _, k in calls) for calls in (b_calls, c_calls)]
        parts.append(f"host sync calls ({and_list(names)}) {counts[0]:,} -> {counts[1]:,}, {ms3(b_ns):.3f} ms -> "
                     f"{ms3(c_ns):.3f} ms of host time: each waits for the device work queued before it, and the "
                     "device idles after it until the host launches more")
    share = round(free / e2e * 100)
    return (f"{FREE_OTHER_STEP} {ms3(free):+.3f} ms ({share}% of the E2E change) is "
            f"{free_other_is(evidence.get('copies'))}: "
            f"{_idle_words(longer, bool(contrib.attrs.get('api_sheet', True)), ' or to load its data')}; "
            f"in the profiles: {'; '.join(parts)}")


def _net_note(level: str, net: float, e2e: float, wf: pd.DataFrame, e2e_delta_ns: int,
              api_sheet: bool = True, window: ExportWindow | None = None, beside: bool = False,
              copies: tuple[int, int] | None = None) -> str:
    """``_unexplained``'s sentence on the net change of the level's rows against the E2E change ("" for none)."""
    shown = f"{ms3(e2e_delta_ns):+.3f} ms"  # the verdict's figure: ``e2e`` by its float read +0.004 of 4.5 us
    moved = f"{half_up(net, 3):+.3f} ms"  # as the tables: a net of -100 ns read "-0.000 ms"
    if net / e2e >= OVERSTATED_SHARE:  # a text export against a DB export: -106 ms of operators, -7.4 ms of E2E
        return (f"all {level}s together changed by {moved}, {net / e2e:.1f}x the E2E change ({shown}): "
                "their device time moved much more than the E2E time, as where it overlaps other work or the two "
                "sides record it differently (see the validity checks); the waterfall shows where the E2E change is")
    if net / e2e >= EXPLAINED_SHARE:
        return ""
    named, most, rest = _outside_steps(wf, e2e_delta_ns)
    if rest is not None:
        why = f"the waterfall puts all of it in {named}" + (
            f"; other steps moved {ms3(rest):+.3f} ms the other way" if ms3(rest) else "") + _idle_next(
            named, e2e, api_sheet, wf, window, beside, copies)
    elif most:
        why = f"the waterfall puts most of it in {named}" + _idle_next(named, e2e, api_sheet, wf, window, beside,
                                                                          copies)
    elif named:
        why = f"the waterfall puts part of it in {named}; see the waterfall for the rest"
    else:
        why = "free time, communication, or kernels not linked to them; see the waterfall"
    if net / e2e < 0:  # the other way: a share (-7982 % on text vs DB) would say nothing
        head = f"all {level}s together changed by {moved}, against an E2E change of {shown}: "
        if -net / e2e >= OVERSTATED_SHARE:
            # text vs DB, level 1 rank 0: -106.827 ms of operators against +1.338 ms of E2E read only "the E2E change
            # is outside their device time", as if those 106 ms had not moved
            return head + (f"their device time moved the other way, {-net / e2e:.1f}x as much, as where it overlaps "
                           "other work or the two sides record it differently (see the validity checks), and the E2E "
                           f"change is outside it ({why})")
        return head + f"the E2E change is outside their device time ({why})"
    pct = round(net / e2e * 100)  # a change that rounds to 0 % is no 0 % beside a figure that is not 0
    share = "under 1%" if net and not pct else f"{pct}%"
    return (f"all {level}s together changed by {moved}, {share} of the E2E change ({shown}): "
            f"most of it is outside their device time ({why})")
