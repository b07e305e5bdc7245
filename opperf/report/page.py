"""HTML building blocks shared by the report and the dashboard: escaped text, flag badges, data
tables (sortable and filterable by ``assets/opperf.js``), and the page shell with the stylesheet and
script either inlined (one self-contained file) or linked (files written once beside the pages).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Generic, TypeVar

from opperf.utils.words import counted

ASSETS = ("opperf.css", "opperf.js")
"""The stylesheet and script, in ``opperf/report/assets``."""

Item = TypeVar("Item")


def asset(name: str) -> str:
    return resources.files("opperf.report").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def escape(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def flag_badges(flags: Iterable[str]) -> str:
    return "".join(f'<span class="flag {escape(f)}">{escape(f.replace("_", " "))}</span>' for f in flags)


@dataclass(frozen=True)
class Column(Generic[Item]):
    """A table column: its header, the cell's HTML, and the value it sorts by (numbers sort as numbers;
    None sorts last). ``numeric`` right-aligns it."""

    header: str
    cell: Callable[[Item], str]
    sort_value: Callable[[Item], object] | None = None
    numeric: bool = False


def data_table(
    table_id: str,
    columns: Sequence[Column[Item]],
    items: Sequence[Item],
    row_class: Callable[[Item], str] | None = None,
    flagged: Callable[[Item], bool] | None = None,
) -> str:
    """A table with a filter box (and a "flagged only" box when ``flagged`` is given) over it."""
    controls = [
        f'<input type="search" placeholder="filter rows…" data-filter-for="{table_id}" '
        f'aria-label="filter {table_id}">'
    ]
    if flagged is not None:
        controls.append(f'<label><input type="checkbox" data-flagged-for="{table_id}"> flagged only</label>')
    controls.append(f'<span class="muted" data-count-for="{table_id}">{counted(len(items), "row")}</span>')
    head = "".join(
        f'<th class="num">{escape(c.header)}</th>' if c.numeric else f"<th>{escape(c.header)}</th>"
        for c in columns
    )
    body = []
    for item in items:
        attributes = ""
        if row_class is not None:
            attributes += f' class="{escape(row_class(item))}"'
        if flagged is not None:
            attributes += f' data-flagged="{"yes" if flagged(item) else "no"}"'
        cells = "".join(_cell(column, item) for column in columns)
        body.append(f"<tr{attributes}>{cells}</tr>")
    return (
        f'<div class="controls">{" ".join(controls)}</div>'
        f'<table class="data" id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _cell(column: Column, item: object) -> str:
    css = ' class="num"' if column.numeric else ""
    if column.sort_value is None:
        return f"<td{css}>{column.cell(item)}</td>"
    value = column.sort_value(item)
    shown = "" if value is None else (f"{value:.12g}" if isinstance(value, float) else str(value))
    return f'<td{css} data-value="{escape(shown)}">{column.cell(item)}</td>'


def number(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def plot(svg: str, caption: str) -> str:
    """A figure holding one inline SVG plot and its caption ("" when there is no plot)."""
    if not svg:
        return ""
    return f'<figure class="plot">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def cards(items: Iterable[tuple[str, object]]) -> str:
    return (
        '<div class="summary-grid">'
        + "".join(f'<div class="card"><b>{escape(value)}</b>{escape(name)}</div>' for name, value in items)
        + "</div>"
    )


def note_paragraphs(texts: Iterable[str], lead: str = "") -> str:
    """Each text a highlighted paragraph (``p.note``), after ``lead``: what a reader must know beside
    a page's tables (a diff's warnings, a history's machine factor)."""
    return "".join(f'<p class="note">{escape(lead)}{escape(text)}</p>' for text in texts)


def key_value_table(items: Iterable[tuple[str, str]]) -> str:
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in items)
    return f"<table>{rows}</table>"


def page(title: str, body: str, *, inline_assets: bool, prefix: str = "") -> str:
    """A whole HTML page. ``inline_assets`` puts the stylesheet and script in the page (the report,
    one file); otherwise they are linked from ``prefix`` (the dashboard's shared copies)."""
    if inline_assets:
        style = f"<style>{asset('opperf.css')}</style>"
        script = f"<script>{asset('opperf.js')}</script>"
    else:
        style = f'<link rel="stylesheet" href="{prefix}opperf.css">'
        script = f'<script src="{prefix}opperf.js"></script>'
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{style}</head>'
        f"<body>{body}{script}</body></html>\n"
    )


def section(anchor: str, title: str, content: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>'
