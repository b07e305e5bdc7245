"""A Markdown (GitHub) table whose cells stay in their cell.

Operator names, inputs and reasons come from result files: a ``|`` in one would open a column of its
own and a newline a row of its own. Every cell's text is escaped here (``|`` as ``\\|``, line breaks as
spaces) before ``tabulate`` lays the table out, so a table has exactly one row per row given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell_text(value: object) -> object:
    """A cell's value with ``|`` escaped and line breaks as spaces; numbers and None unchanged."""
    if not isinstance(value, str):
        return value
    return " ".join(value.replace("|", "\\|").splitlines())


def markdown_table(rows: Iterable[Sequence[object]], headers: Sequence[str], **options: object) -> str:
    """``rows`` under ``headers`` as a GitHub Markdown table (``options`` go to ``tabulate``, imported
    here: a worker running in another build's interpreter, ``ab --base-python``, imports this module
    but needs only numpy and the framework there)."""
    from tabulate import tabulate

    escaped = [[cell_text(value) for value in row] for row in rows]
    return tabulate(escaped, headers=[cell_text(h) for h in headers], tablefmt="github", **options)
