"""The HTML report's views over records other commands add, on real runs: a long-tail sweep at the
eager and graph stages, a fuzzed-shape sweep, a sweep at 1 and 2 threads, and a real model report
(MXNet resnet18_v1); the model report's workbook; the page in a real headless Chromium."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from browser import chromium, needs_browser

from opperf.cli import main
from opperf.operators import longtail

openpyxl = pytest.importorskip("openpyxl", reason="the opperf[xlsx] extra is not installed (make venv)")
pytest.importorskip("matplotlib", reason="the opperf[plot] extra is not installed (make venv)")

QUICK = ["--runs", "3", "--warmup", "1", "--quiet", "--no-backward"]
VIEWS = ("model", "threads", "stages", "tag-stages", "tags", "sensitivity")


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Real files: stages (make_positions takes the graph stage, sequence_mask cannot), fuzzed shapes,
    threads 1 and 2 (their own workers), a model report as JSON and as a workbook, and the configs
    file its capture wrote."""
    folder = tmp_path_factory.mktemp("views")
    paths = {name: folder / f"{name}.json" for name in ("stages", "fuzz", "threads", "model")}
    paths["model_xlsx"] = folder / "model.xlsx"
    paths["configs"] = folder / "configs.jsonl"
    stages = ["--ops", "make_positions,sequence_mask", "--stages", "eager,graph", "--profiler", "python"]
    assert main([*stages, *QUICK, "--no-isolation", "--output-file", str(paths["stages"])]) == 0
    fuzz = ["--ops", "exp", "--shapes", "fuzz", "--fuzz-count", "4", *QUICK, "--no-isolation"]
    assert main([*fuzz, "--output-file", str(paths["fuzz"])]) == 0
    assert main(["--ops", "exp", "--threads", "1,2", *QUICK, "--output-file", str(paths["threads"])]) == 0
    model = ["model", "--framework", "mxnet", "--model", "resnet18_v1", "--input-shape", "1,3,32,32"]
    model += ["--passes", "2", "--output-file", str(paths["model_xlsx"]), "--json-file", str(paths["model"])]
    model += ["--configs-file", str(paths["configs"])]
    assert main(model) == 0
    return paths


@pytest.fixture(scope="session")
def page(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("views-page") / "views.html"
    files = [str(runs[name]) for name in ("stages", "fuzz", "threads", "model")]
    assert main(["report", *files, "--html", str(out)]) == 0
    return out


def _sections(html: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="([^"]+)">(.*?)</section>', html, re.DOTALL))


def _rows(html: str, table_id: str) -> list[list[str]]:
    """The cells' text of a data table's body rows."""
    body = re.search(rf'<table class="data" id="{table_id}">.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    assert body, table_id
    return [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.DOTALL)
    ]


def _records(path: Path) -> list[dict]:
    return json.loads(path.read_text())["results"]


def test_each_view_has_its_section_link_and_a_plot_with_content(page):
    html = page.read_text()
    sections = _sections(html)
    for anchor in VIEWS:
        assert anchor in sections and f'href="#{anchor}"' in html, anchor
        figures = re.findall(r'<figure class="plot">(.*?)</figure>', sections[anchor], re.DOTALL)
        assert figures, anchor
        for figure in figures:
            assert "<svg" in figure and figure.count("<path") >= 5, (anchor, figure[:200])
    assert "comparison" not in sections and "diffs" not in sections  # no such records given


def test_stage_table_holds_every_staged_record_with_its_speedup_or_reason(page, runs):
    records = _records(runs["stages"])
    eager = {json.dumps(r["inputs"], sort_keys=True): r for r in records if r["stage"] == "eager"}
    staged = [r for r in records if r["stage"] == "graph"]
    rows = _rows(page.read_text(), "stages")
    assert len(rows) == len(staged) > 0
    headers = ["framework", "function", "inputs", "stage", "status", "eager ms", "stage ms", "speedup"]
    skipped = [r for r in staged if r["status"] == "skipped"]
    assert skipped and all("cannot hybridize" in r["reason"] for r in skipped)
    assert sum("cannot hybridize" in row[-1] for row in rows) == len(skipped)
    for record in staged:
        if record["status"] != "ok":
            continue
        base = eager[json.dumps(record["inputs"], sort_keys=True)]["forward"]["median_s"]
        expected = f"{base / record['forward']['median_s']:.3g}"
        assert any(row[headers.index("speedup")] == expected for row in rows), expected


def test_tag_table_counts_the_configurations_of_the_operators_carrying_each_tag(page, runs):
    records = _records(runs["stages"])
    staged = [r for r in records if r["stage"] == "graph"]
    rows = {row[0]: row for row in _rows(page.read_text(), "tag-stages")}
    tags = {tag for r in staged for tag in longtail.entry(r["op"]).tags}
    assert set(rows) == tags
    for tag in tags:
        mine = [r for r in staged if tag in longtail.entry(r["op"]).tags]
        measured = [r for r in mine if r["status"] == "ok"]
        assert rows[tag][1] == "mxnet graph"
        assert (int(rows[tag][3]), int(rows[tag][4])) == (len(measured), len(mine) - len(measured))


def test_thread_table_has_a_row_per_configuration_and_each_count(page, runs):
    records = _records(runs["threads"])
    assert {r["threads"] for r in records} == {1, 2}
    rows = _rows(page.read_text(), "threads-table")
    assert len(rows) == len({json.dumps(r["inputs"], sort_keys=True) for r in records})
    sections = _sections(page.read_text())
    assert "1 thr ms" in sections["threads"] and "efficiency 2" in sections["threads"]
    assert "ideal (linear)" in sections["threads"]


def test_sensitivity_lists_each_fuzzed_configuration_by_element_count(page, runs):
    records = [r for r in _records(runs["fuzz"]) if r["status"] == "ok"]
    rows = _rows(page.read_text(), "sensitivity-1")
    assert len(rows) == len(records) == 4
    elements = [int(row[2]) for row in rows]
    assert elements == sorted(math.prod(r["inputs"]["data"]["shape"]) for r in records)


def test_model_section_shows_each_operator_and_its_share(page, runs):
    report = json.loads(runs["model"].read_text())
    html = page.read_text()
    rows = _rows(html, "model-0")
    assert [row[0] for row in rows] == [o["op"] for o in report["operators"]]
    shares = [float(row[4].rstrip("%")) for row in rows]
    assert sum(shares) == pytest.approx(100, abs=0.5)
    assert len(_rows(html, "model-configurations-0")) == len(report["configurations"])
    assert "resnet18_v1" in _sections(html)["model"]


def test_model_workbook_reads_back_with_the_ratio_shaded_around_one(runs):
    report = json.loads(runs["model"].read_text())
    sheets = pd.read_excel(runs["model_xlsx"], sheet_name=None)
    assert list(sheets) == ["operators", "configurations", "summary"]
    operators = sheets["operators"]
    assert sorted(operators["operator"]) == sorted(o["op"] for o in report["operators"])
    assert operators["in-model share"].sum() == pytest.approx(1.0, abs=1e-6)
    assert operators["calls"].sum() == sum(o["calls"] for o in report["operators"])
    assert len(sheets["configurations"]) == len(report["configurations"])
    sheet = openpyxl.load_workbook(runs["model_xlsx"])["operators"]
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref.startswith("A1:")
    (rule_range,) = [str(r.sqref) for r in sheet.conditional_formatting]
    assert rule_range.startswith("H2:")  # standalone / in-model


def test_output_errors_name_the_flag_that_chose_the_file(runs, tmp_path, capsys):
    missing = tmp_path / "no-such-folder" / "r.html"
    assert main(["report", str(runs["stages"]), "--html", str(missing)]) == 2
    error = capsys.readouterr().err
    assert "choose another --output-file" in error  # the flag's name (--html is its alias)
    assert main(["model", "--framework", "mxnet", "--model", "resnet18_v1", "--output-format", "xlsx"]) == 2
    assert "name it with --output-file" in capsys.readouterr().err


def test_a_model_report_lacking_a_field_is_an_error_naming_it(runs, tmp_path, capsys):
    document = json.loads(runs["model"].read_text())
    del document["operators"][0]["calls"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    assert main(["report", str(broken), "--html", str(tmp_path / "r.html")]) == 2
    error = capsys.readouterr().err
    assert "broken.json" in error and "has no operators[0].calls" in error and "Traceback" not in error


def test_a_configs_file_is_refused_with_the_command_that_measures_it(runs, tmp_path, capsys):
    assert main(["report", str(runs["configs"]), "--html", str(tmp_path / "r.html")]) == 2
    error = capsys.readouterr().err
    assert f"opperf sweep --configs {runs['configs']}" in error and "Traceback" not in error
    assert not (tmp_path / "r.html").exists()


@needs_browser
def test_the_page_runs_its_script_in_a_real_browser(page, tmp_path):
    tables = page.read_text().count('<table class="data"')
    dom = chromium(page.as_uri(), "--dump-dom")
    assert f'data-opperf-ready="{tables}"' in dom.stdout, dom.stderr[-2000:]
    assert "Uncaught" not in dom.stderr
    for anchor in VIEWS:  # each view's plot is in the rendered document
        assert re.search(rf'<section id="{anchor}">.*?<svg', dom.stdout, re.DOTALL), anchor
    screenshot = tmp_path / "views.png"
    shot = chromium(page.as_uri(), "--window-size=1200,4000", f"--screenshot={screenshot}")
    assert screenshot.is_file() and screenshot.stat().st_size > 50_000, shot.stderr[-2000:]


def test_a_long_stage_plot_keeps_the_extremes_either_way():
    """More measured configurations than a plot draws: the fastest and the slowest half each."""
    from opperf.report.html_views import PLOTTED, _extremes, staged_rows
    from opperf.results.record import read_record

    def record(size: int, stage: str, median: float) -> dict:
        forward = {"median_s": median, "samples_s": [median]}
        inputs = {"data": {"shape": [size]}}
        return {"framework": "mxnet", "namespace": "mx.nd", "op": "exp", "status": "ok", "stage": stage,
                "inputs": inputs, "forward": forward}  # fmt: skip

    rows = []
    for size in range(1, PLOTTED + 11):
        rows += [
            read_record(record(size, "eager", 1e-3), "f", "f"),
            read_record(record(size, "graph", 1e-3 / size), "f", "f"),
        ]
    shown = _extremes([s for s in staged_rows(rows) if s.speedup is not None])
    speedups = sorted(round(s.speedup) for s in shown)
    assert len(shown) == PLOTTED
    assert speedups == [*range(1, PLOTTED // 2 + 1), *range(PLOTTED // 2 + 11, PLOTTED + 11)]


def test_a_comparison_file_pairs_records_whose_names_differ(tmp_path):
    """A comparison document (a results document whose ``comparison.rows`` name each namespace's
    record), as ``opperf compare --output-format json`` writes it, of real measurements: mx.nd's
    FullyConnected beside mx.npx's fully_connected, which matching by name would never pair."""
    from opperf.results.options import RunOptions
    from opperf.verdicts.compare.comparison import Comparison, compare
    from opperf.verdicts.compare.rendering import comparison_document
    from opperf.verdicts.compare.selection import configurations

    options = RunOptions(runs=3, warmup=1, run_backward=False)
    (row,) = compare(
        "FullyConnected", configurations("FullyConnected", ["mx.nd"])[:1], ("mx.nd", "mx.np"), options
    )
    document = comparison_document(Comparison((row,), 1), ("mx.nd", "mx.np"), options, ["opperf", "compare"])
    records = document["results"]
    assert records[1]["function"] == "mx.npx.fully_connected"
    assert document["environment"]["profilers"] == {"mxnet": "native"}  # each framework's own timer
    path, out = tmp_path / "compare.json", tmp_path / "compare.html"
    path.write_text(json.dumps(document))
    assert main(["report", str(path), "--html", str(out)]) == 0
    section = _sections(out.read_text())["comparison"]
    (cells,) = _rows(out.read_text(), "comparison")
    medians = [r["forward"]["median_s"] * 1e3 for r in records]
    assert cells[0] == "FullyConnected (mx.npx.fully_connected)"
    assert [float(c) for c in cells[2:5]] == pytest.approx([*medians, medians[1] / medians[0]], rel=5e-3)
    assert "mx.np / first" in section and "<svg" in section


def test_namespaces_are_compared_only_where_every_setting_of_the_row_key_agrees():
    """Rows were paired on name, shapes, dtype, stage and threads: an mx.np row drawn with NaN and
    infinities, transposed, stood against mx.nd's as if measured alike; and a later file's row of a
    namespace already seen was dropped unsaid."""
    import json

    from opperf.results.rows import comparison_groups, results_file

    document = json.loads((Path(__file__).parent / "golden" / "results_v1.json").read_text())
    measured = [r for r in document["results"] if r["status"] == "ok" and r.get("forward")]
    as_np = [
        {**r, "namespace": "mx.np", "function": r["function"].replace("mx.nd.", "mx.np.")} for r in measured
    ]
    alike = results_file({**document, "results": measured + as_np}, "alike.json")
    pairs = comparison_groups([alike])
    assert pairs and all(group.names == ("mx.nd", "mx.np") for group in pairs)
    otherwise = [{**r, "values": "with-nan-inf", "layout": "transposed"} for r in as_np]
    drawn_otherwise = results_file({**document, "results": measured + otherwise}, "other.json")
    assert comparison_groups([drawn_otherwise]) == []
    twice = results_file({**document, "results": measured}, "again.json")
    groups = comparison_groups([alike, twice])  # mx.nd in both files: a group with each file's row
    assert len(groups) == 2 * len(pairs) and all(group.names == ("mx.nd", "mx.np") for group in groups)
    assert sum(group.rows[0] in twice.rows for group in groups) == len(pairs)
    assert all(group.rows[1] in alike.rows for group in groups)


def test_threads_and_stages_together_label_every_row_apart(tmp_path):
    """With threads and stages both factors, the thread-scaling tables listed the eager and the graph
    configuration under one label, the main table each configuration twice without its thread count,
    and the stage table each graph row twice without one: a reader could not tell which was which."""
    from opperf.report.markdown import render_markdown

    results, page = tmp_path / "t.json", tmp_path / "t.html"
    sweep = ["--ops", "exp", "--threads", "1,2", "--stages", "eager,graph", "--profiler", "python", *QUICK]
    assert main([*sweep, "--output-file", str(results)]) == 0
    markdown = render_markdown(json.loads(results.read_text()))
    table_rows = [line.split("|")[1:3] for line in markdown.splitlines() if line.startswith("| mx.nd.exp")]
    assert len(table_rows) == 12 + 6 and len({tuple(cells) for cells in table_rows}) == 18  # main, scaling
    assert any("[graph, 2 thr]" in cells[0] for cells in table_rows)
    assert main(["report", str(results), "--html", str(page)]) == 0
    html = page.read_text()
    staged = [(row[1], row[2], row[3], row[4]) for row in _rows(html, "stages")]
    assert len(staged) == 6 and len(set(staged)) == 6 and {row[3] for row in staged} == {"1", "2"}
    scaled = [(row[0], row[1]) for row in _rows(html, "threads-table")]
    assert len(scaled) == 6 and len(set(scaled)) == 6
