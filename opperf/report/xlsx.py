"""Spreadsheets (``--output-format xlsx``): a generic writer of typed tables to one workbook.

A ``Table`` is a sheet: named columns with a width and an Excel number format each, and rows of
plain values. Every sheet gets a frozen header row and an autofilter; a column marked
``centred_scale`` gets a colour scale centred on 1 (green below, white at 1, red above: a ratio of
new over base). Sweeps, diffs and model reports each build their tables (``xlsx_tables``) and share
this writer. openpyxl comes from the ``opperf[xlsx]`` extra.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opperf.report.extras import require
from opperf.utils.cells import reads_as_formula

PURPOSE = "--output-format xlsx"
SHEET_NAME_LIMIT = 31
"""Excel refuses longer sheet names."""


@dataclass(frozen=True)
class SheetColumn:
    """A column: header, width in characters, Excel number format ("General" for text), and whether
    it carries the colour scale centred on 1."""

    header: str
    width: float = 12
    number_format: str = "General"
    centred_scale: bool = False


@dataclass(frozen=True)
class Table:
    """One sheet: its name, columns and rows (each a tuple of plain values, one per column)."""

    name: str
    columns: tuple[SheetColumn, ...]
    rows: tuple[tuple[object, ...], ...]


def require_openpyxl():
    """openpyxl, or OpperfError naming the ``opperf[xlsx]`` extra (call before long work)."""
    return require("openpyxl", "xlsx", PURPOSE)


def workbook_bytes(tables: Sequence[Table]) -> bytes:
    """The tables as an .xlsx file's bytes."""
    openpyxl = require_openpyxl()
    formatting = require("openpyxl.formatting.rule", "xlsx", PURPOSE)
    utils = require("openpyxl.utils", "xlsx", PURPOSE)
    styles = require("openpyxl.styles", "xlsx", PURPOSE)
    book = openpyxl.Workbook()
    book.remove(book.active)
    for table in tables:
        sheet = book.create_sheet(table.name[:SHEET_NAME_LIMIT])
        sheet.append([c.header for c in table.columns])
        for cell in sheet[1]:
            cell.font = styles.Font(bold=True)
        for row_number, row in enumerate(table.rows, start=2):
            for column_number, value in enumerate(row, start=1):
                _set(sheet.cell(row=row_number, column=column_number), value)
        last_row = max(2, len(table.rows) + 1)
        for index, column in enumerate(table.columns, start=1):
            letter = utils.get_column_letter(index)
            sheet.column_dimensions[letter].width = column.width
            if column.number_format != "General":
                for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
                    cell.number_format = column.number_format
            if column.centred_scale:
                sheet.conditional_formatting.add(
                    f"{letter}2:{letter}{last_row}",
                    formatting.ColorScaleRule(
                        start_type="num", start_value=0.5, start_color="63BE7B",
                        mid_type="num", mid_value=1, mid_color="FFFFFF",
                        end_type="num", end_value=2, end_color="F8696B",
                    ),
                )  # fmt: skip
        sheet.freeze_panes = "A2"
        sheet.auto_filter.ref = f"A1:{utils.get_column_letter(len(table.columns))}{last_row}"
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _set(cell: Any, value: Any) -> None:
    """Put a plain value in ``cell``: lists and dicts as text (a cell holds one value); text stays text,
    never a formula (``utils.cells``), with the characters a workbook cannot hold replaced."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    if isinstance(value, (list, tuple, dict)):
        value = str(value)
    if isinstance(value, str):
        value = ILLEGAL_CHARACTERS_RE.sub("\ufffd", value)
    cell.value = value
    if reads_as_formula(value):
        cell.data_type = "s"
        cell.quotePrefix = True


def write_workbook(path: str | Path, tables: Sequence[Table]) -> None:
    """The workbook written through a temporary file renamed over ``path`` (never half-written)."""
    data = workbook_bytes(tables)
    folder = Path(path).resolve().parent
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".opperf-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as output:
            output.write(data)
            output.flush()
            os.fsync(output.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
