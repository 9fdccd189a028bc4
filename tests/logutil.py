"""The log's notes as blocks: a note whose Detail has parts is a title line and a "  - " line per part
(``checks.LOG_PARTS``); in a rank-by-rank run each line, items too, begins with its rank (``rank 1:   - ...``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

#: a rank-by-rank run's line prefix (``units.unit_label``): "rank 1: ", "rank 1 cycle 0: ", "cycle 0: "
_UNIT = re.compile(r"(?:rank \d+(?: cycle \d+)?|cycle \d+): ")


def blocks(messages: list[str], title: str) -> list[list[str]]:
    """Each note that begins with ``title`` (after its rank, in a rank-by-rank run): its line, then the "  - " item
    lines under it of the same rank (their text after the dash)."""
    found: list[list[str]] = []
    inside: str | None = None  # the rank prefix of the block under way ("" outside rank runs); None: no block
    for m in messages:
        unit = _UNIT.match(m)
        prefix = unit.group(0) if unit else ""
        text = m[len(prefix):]
        if text.startswith(title) or m.startswith(title):
            found.append([m])
            inside = prefix
        elif inside is not None and prefix == inside and text.startswith("  - "):
            found[-1].append(text[4:])
        else:
            inside = None
    return found


#: The note on a Free: Other change, the last part of the note under the contributors (``idle_growth_note``).
_IDLE = re.compile(r"(?:^|; )(Free: Other [+-]\d+\.\d{3} ms \(\d+% of the E2E change\) is device idle time: .*)$")


def split_idle(note: str) -> tuple[str, str]:
    """The one-line note under the contributors without its note on a Free: Other change, and that note as the
    console's sentence of its own ("" for none)."""
    idle = _IDLE.search(note)
    return (note[:idle.start()], f"{idle[1]}.") if idle else (note, "")


#: A DB export's time outside its computing and communication as the one-line note says it, read alone, and as the
#: lines under the E2E line that names it say it (``summary_notes.window_words``)
_WINDOW = (re.compile(r"Free: Other is device idle time and, on the (base|comparison) side \(a DB export\), also its "
                      r"(\d+\.\d{3} ms (?:before its first|after its last|before its first and after its last) "
                      r"computing or communication) \([^()]*\), which a text export's E2E leaves out"),
           r"Free: Other is device idle time and also the \1 side's \2, which the E2E line names")
#: The uncovered communication's change no sheet breaks down by op, with its figures (the one line) and under the
#: waterfall's rows that give them (``summary_notes.unsplit_communication_note``)
_UNSPLIT = (re.compile(r"uncovered communication \(the waterfall's communication steps\) changed by [+-]\d+\.\d{3} ms"
                       r"(?:, -?\d+\.\d% of the E2E change|, against an E2E change of [+-]\d+\.\d{3} ms)?, which no "
                       r"sheet breaks down by op"),
            "no sheet breaks the change of uncovered communication (the waterfall's communication steps) down by op")


def beside_words(note: str) -> str:
    """The one-line note with the figures that the lines under the waterfall and the E2E line leave out, left out
    (the words of ``contributors_note_lines``), from the words alone."""
    for pattern, said in (_WINDOW, _UNSPLIT):
        note = pattern.sub(said, note)
    return note


def note_lines(note: str) -> list[str]:
    """The console's lines of the note under the contributors that the Summary sheet and the JSON give in one line
    (``note``): its sentences, "Note: " first; the Share column's basis ("; the Share column is of ..."), the parts
    after it (the notes on communication's change, one sentence) and a note of collective communication inside
    contributors ("most of the change of ...") each follow as sentences of their own,
    the latter's why (its parentheses) after its figures as "These are ...", and "Wait is ..." and "Transmit is ..."
    after ". "; the note on a Free: Other change ("Free:
    Other +1.000 ms (..% of the E2E change) is device idle time: ...") last, a sentence of its own. Made from the words
    alone; the figures the waterfall's rows and the E2E line above give are left out (``beside_words``)."""
    note, idle = split_idle(beside_words(note))
    if idle:
        return [*note_lines(note), idle] if note else [f"Note: {idle}"]
    at = note.find("most of the change of ")
    head, comm = (note[:at].removesuffix("; "), note[at:]) if at >= 0 else (note, "")
    said = []
    if head:
        first, sep, basis = head.partition("; the Share column is of ")
        # the parts after the basis (the notes on communication's change) are a sentence of their own
        basis, end, after = basis.partition("(savings do not cancel growth); ")
        said += [first, f"the Share column is of {basis}{end.removesuffix('; ')}"] if sep else [first]
        said += [after] if after else []
    if comm:
        found = re.fullmatch(r"(.*? launched inside (?:it|them)) \((.*?)\): (.*)", comm)
        assert found, comm
        said += [f"{found[1]}: {found[3]}", f"these are {found[2]}"]
    # what Wait and Transmit are: sentences of the Wait / Transmit part, a line each
    said = [t for s in said for t in re.split(r"\. (?=(?:Wait|Transmit) is )", s)]
    return [f"Note: {said[0]}.", *(f"{s[0].upper()}{s[1:]}." for s in said[1:])]


@contextmanager
def messages_logged() -> Iterator[list[str]]:
    """The messages the package logger hands its handlers while the block runs, where a test helper has no
    ``caplog`` of its own (at the logger's own level: WARNING and above)."""
    logger = logging.getLogger("msprof-analyze")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
