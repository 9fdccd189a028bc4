"""The log's notes as blocks: a note whose Detail has parts is a title line and a "  - " line per part
(``checks.LOG_PARTS``)."""

from __future__ import annotations


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

