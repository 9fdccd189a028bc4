"""The log's notes as blocks: a note whose Detail has parts is a title line and a "  - " line per part
(``checks.LOG_PARTS``)."""

from __future__ import annotations

import re


def blocks(messages: list[str], title: str) -> list[list[str]]:
    """Each note that begins with ``title``: its line, then the "  - " item lines under it (their text after the
    dash)."""
    found: list[list[str]] = []
    inside = False
    for m in messages:
        if m.startswith(title):
            found.append([m])
            inside = True
        elif inside and m.startswith("  - "):
            found[-1].append(m[4:])
        else:
            inside = False
    return found



def note_lines(note: str) -> list[str]:
    """The console's lines of the note under the contributors that the Summary sheet and the JSON give in one line
    (``note``): its sentences, "Note: " first; the Share column's basis ("; the Share column is of ...") and a note of
    collective communication inside contributors ("most of the change of ...") each follow as sentences of their own,
    the latter's why (its parentheses) after its figures as "These are ...". Made from the words alone."""
    at = note.find("most of the change of ")
    head, comm = (note[:at].removesuffix("; "), note[at:]) if at >= 0 else (note, "")
    said = []
    if head:
        first, sep, basis = head.partition("; the Share column is of ")
        said += [first, f"the Share column is of {basis}"] if sep else [first]
    if comm:
        found = re.fullmatch(r"(.*? launched inside (?:it|them)) \((.*?)\): (.*)", comm)
        assert found, comm
        said += [f"{found[1]}: {found[3]}", f"these are {found[2]}"]
    return [f"Note: {said[0]}.", *(f"{s[0].upper()}{s[1:]}." for s in said[1:])]
