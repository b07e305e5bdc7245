"""Tables of text from files (Markdown, and plain for a terminal) whose cells stay in their cell.

Operator names, inputs and reasons come from result files and history stores: a ``|`` in one would
open a column of its own, a newline a row of its own, and a control character (an escape sequence)
would clear the terminal or retitle its window. Every cell's text is made printable here (control
characters shown as ``\\x1b``, line breaks as spaces, and in Markdown ``|`` as ``\\|``) before
``tabulate`` lays the table out, so a table has exactly one row per row given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with line breaks as spaces and other control characters shown escaped (``\\x1b``)."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", " ".join(text.splitlines()))


def cell_text(value: object) -> object:
    """A Markdown cell's value, printable and with ``|`` escaped; numbers and None unchanged."""
    if not isinstance(value, str):
        return value
    return printable(value).replace("|", "\\|")


def terminal_table(rows: Iterable[Sequence[object]], headers: Sequence[str]) -> str:
    """``rows`` under ``headers`` as a plain table for a terminal, each text cell printable."""
    from tabulate import tabulate

    shown = [[printable(value) if isinstance(value, str) else value for value in row] for row in rows]
    return tabulate(shown, headers=headers)


def markdown_table(rows: Iterable[Sequence[object]], headers: Sequence[str], **options: object) -> str:
    """``rows`` under ``headers`` as a GitHub Markdown table (``options`` go to ``tabulate``, imported
    here: a worker running in another build's interpreter, ``ab --base-python``, imports this module
    but needs only numpy and the framework there)."""
    from tabulate import tabulate

    escaped = [[cell_text(value) for value in row] for row in rows]
    return tabulate(escaped, headers=[cell_text(h) for h in headers], tablefmt="github", **options)
