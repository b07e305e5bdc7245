"""``opperf report --html``, ``opperf publish`` and ``--output-format xlsx`` on real files: small real
sweeps of both frameworks, a real diff, a real history store; the pages rendered in a real headless
Chromium where one is installed."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from browser import chromium, needs_browser
from documents import another_run

from opperf.cli import main
from opperf.verdicts.diff import INDICATIVE_NOTE
from opperf.verdicts.history.store import History

openpyxl = pytest.importorskip("openpyxl", reason="the opperf[xlsx] extra is not installed (make venv)")
pytest.importorskip("matplotlib", reason="the opperf[plot] extra is not installed (make venv)")

DATA = Path(__file__).parent / "data" / "verdicts"
SWEEP = ["--runs", "3", "--warmup", "1", "--quiet", "--no-isolation"]
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def _scaled_copy(source: Path, target: Path, factor: float, started: str, op: str = "exp") -> Path:
    """A real result file made another run (``another_run``) with ``op``'s samples scaled by
    ``factor``: a run in which it got slower."""
    document = another_run(json.loads(source.read_text()))
    document["environment"]["started"] = started
    for record in document["results"]:
        for phase in ("forward", "backward"):
            if record["op"] == op and record.get(phase):
                record[phase]["samples_s"] = [s * factor for s in record[phase]["samples_s"]]
    target.write_text(json.dumps(document))
    return target


@pytest.fixture(scope="session")
def files(tmp_path_factory) -> dict[str, Path]:
    """An MXNet sweep (JSON and xlsx from one run; mx.nd and mx.np), a PyTorch sweep, a diff of real
    runs against a slowed copy, and a history store of six runs with a step up in exp."""
    folder = tmp_path_factory.mktemp("presentation")
    paths = {
        "mx": folder / "mx.json",
        "mx_xlsx": folder / "mx.xlsx",
        "torch": folder / "torch.json",
        "diff": folder / "diff.json",
        "db": folder / "history.sqlite",
    }
    mx = ["--ops", "exp,relu,dot,_npi_exp", *SWEEP, "--output-file", str(paths["mx_xlsx"])]
    assert main([*mx, "--json-file", str(paths["mx"])]) == 0
    torch = ["--framework", "torch", "--ops", "exp,relu,matmul", *SWEEP]
    assert main([*torch, "--output-file", str(paths["torch"])]) == 0
    runs = [DATA / f"mxnet_run{i}.json" for i in range(1, 5)]
    slower = [
        _scaled_copy(run, folder / f"slower{i}.json", 1.6, f"2026-11-2{i + 5}T00:00:00+00:00")
        for i, run in enumerate(runs[:3])
    ]
    base, new = ",".join(map(str, runs[:3])), ",".join(map(str, slower))
    assert main(["diff", base, new, "--output-format", "json", "--output-file", str(paths["diff"])]) in (0, 1)
    assert main(["history", "add", "--db", str(paths["db"]), *map(str, runs), *map(str, slower)]) == 0
    return paths


@pytest.fixture(scope="session")
def report(files, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert (
        main(["report", str(files["mx"]), str(files["torch"]), str(files["diff"]), "--html", str(out)]) == 0
    )
    return out


@pytest.fixture(scope="session")
def site(files, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert main(["publish", "--db", str(files["db"]), "--out", str(out)]) == 0
    return out


def _sections(html: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="([^"]+)">(.*?)</section>', html, re.DOTALL))


def test_report_has_every_section_with_data_and_each_plot_has_content(report):
    html = report.read_text()
    sections = _sections(html)
    for anchor in (
        "summary",
        "diffs",
        "time-by-category",
        "roofline",
        "comparison",
        "distributions",
        "tables",
    ):
        assert anchor in sections, anchor
        assert f'href="#{anchor}"' in html
    assert "threads" not in sections and "stages" not in sections  # no record varies them
    figures = re.findall(r'<figure class="plot">(.*?)</figure>', html, re.DOTALL)
    assert len(figures) >= 6
    for figure in figures:
        assert "<svg" in figure and figure.count("<path") >= 5, figure[:200]
    assert "compute roof" in sections["roofline"] and "memory roof" in sections["roofline"]


def test_report_tables_hold_every_record_and_show_its_flags(report, files):
    html = report.read_text()
    records = [r for name in ("mx", "torch") for r in json.loads(files[name].read_text())["results"]]
    tables = _sections(html)["tables"]
    rows = re.findall(r"<tr class=\"status-(\w+)\" data-flagged=\"(yes|no)\">(.*?)</tr>", tables, re.DOTALL)
    assert len(rows) == len(records)
    flagged = [r for r in records if r["flags"]]
    assert sum(mark == "yes" for _, mark, _ in rows) == len(flagged) > 0
    for record in flagged:
        for flag in record["flags"]:
            assert f'<span class="flag {flag}">' in tables
    for record in records:
        assert f">{record['function']}<" in tables


def test_report_compares_namespaces_and_draws_the_diff(report, files):
    sections = _sections(report.read_text())
    comparison = sections["comparison"]
    assert "mx.nd" in comparison and "mx.np" in comparison and "torch" in comparison
    diff_rows = json.loads(files["diff"].read_text())["rows"]
    assert sections["diffs"].count("<tr") == len(diff_rows) + 1  # and the header
    counts = json.loads(files["diff"].read_text())["summary"]["counts"]
    for verdict, count in counts.items():
        assert sections["diffs"].count(f'class="verdict-{verdict}"') == count
    if counts["inconclusive"]:
        assert "#bbbbbb" in sections["diffs"]  # inconclusive bars greyed in the waterfall
    assert "5%" in sections["diffs"]  # the threshold band's legend


def test_report_loads_nothing_from_the_network(report):
    html = report.read_text()
    assert not EXTERNAL.search(html)
    assert "<link" not in html and "<script src" not in html


def test_a_section_appears_when_its_records_exist(files, tmp_path):
    """The same sweep recorded at 1 and at 2 threads (a sweep without --threads records none, and
    is not a point of a scaling line): a thread-scaling section."""
    paths = []
    for threads in (1, 2):
        document = json.loads(files["torch"].read_text())
        for record in document["results"]:
            record["threads"] = threads
            record["forward"]["samples_s"] = [s / threads**0.7 for s in record["forward"]["samples_s"]]
        paths.append(tmp_path / f"threads{threads}.json")
        paths[-1].write_text(json.dumps(document))
    out = tmp_path / "threads.html"
    assert main(["report", *map(str, paths), "--html", str(out)]) == 0
    sections = _sections(out.read_text())
    assert "threads" in sections and "<svg" in sections["threads"]
    assert (
        f"{len(document['results'])} configurations measured at several thread counts" in sections["threads"]
    )


def test_xlsx_of_a_sweep_reads_back(files):
    records = json.loads(files["mx"].read_text())["results"]
    sheets = pd.read_excel(files["mx_xlsx"], sheet_name=None)
    assert list(sheets) == ["results", "summary by category", "coverage", "environment"]
    results = sheets["results"]
    assert len(results) == len(records)
    assert sorted(results["function"]) == sorted(r["function"] for r in records)
    medians = dict(zip(results["inputs"] + results["function"], results["fwd median ms"], strict=True))
    assert min(medians.values()) > 0
    assert sheets["summary by category"]["configurations"].sum() == len(records)
    book = openpyxl.load_workbook(files["mx_xlsx"])
    sheet = book["results"]
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref.startswith("A1:")
    header = [c.value for c in sheet[1]]
    assert sheet.cell(2, header.index("fwd median ms") + 1).number_format == "0.0000"


def test_xlsx_of_a_diff_shades_the_ratio_around_one(files, tmp_path):
    out = tmp_path / "diff.xlsx"
    runs = [str(DATA / f"mxnet_run{i}.json") for i in range(1, 5)]
    assert main(["diff", ",".join(runs[:2]), ",".join(runs[2:]), "--output-file", str(out)]) in (0, 1)
    diff = pd.read_excel(out, sheet_name="diff")
    assert len(diff) > 0 and diff["ratio"].notna().any()
    sheet = openpyxl.load_workbook(out)["diff"]
    ratio_column = [c.value for c in sheet[1]].index("ratio") + 1
    letter = openpyxl.utils.get_column_letter(ratio_column)
    (rule_range,) = [str(r.sqref) for r in sheet.conditional_formatting]
    assert rule_range.startswith(f"{letter}2:")
    (rule,) = (
        sheet.conditional_formatting[rule_range] if False else next(iter(sheet.conditional_formatting)).rules
    )
    assert rule.colorScale.cfvo[1].val == 1


def test_html_and_xlsx_of_an_ab_diff_show_the_figures_its_ratio_compares(tmp_path):
    """An A/B job's ratio compares each round's fastest pass; the page and the sheet showed the medians
    beside it (1.002 and 1.301 ms under a ratio of 1), where ``opperf diff`` shows 1 and 1."""
    passes = {"base": (1.0, 1.001, 1.002, 1.003), "new": (1.3, 1.301, 1.302, 1.303)}  # after a 1 ms one
    records = [
        {
            "framework": "mxnet", "namespace": "mx.nd", "op": "exp", "category": "unary",
            "inputs": {"data": {"shape": [64]}}, "status": "ok", "reason": None,
            "forward": {"samples_s": [1e-3, *(scale * 1e-3 for scale in passes[side])]}, "backward": None,
            "memory_peak_bytes": None, "side": side, "round": index, "prepared_in_round": index,
        }
        for index in range(6) for side in ("base", "new")
    ]  # fmt: skip
    ab = tmp_path / "ab.json"
    ab.write_text(json.dumps({"schema_version": 1, "kind": "ab", "environment": {}, "results": records}))
    diff, page, sheet = tmp_path / "d.json", tmp_path / "r.html", tmp_path / "d.xlsx"
    assert main(["diff", str(ab), "--output-format", "json", "--output-file", str(diff)]) == 0
    (row,) = json.loads(diff.read_text())["rows"]
    assert (row["base"]["compared_s"], row["new"]["compared_s"], row["ratio"]) == (1e-3, 1e-3, 1.0)
    assert main(["report", str(diff), "--html", str(page)]) == 0
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", _sections(page.read_text())["diffs"])
    assert "1.301" not in cells and "1.002" not in cells and cells.count("1") >= 2
    assert main(["diff", str(ab), "--output-file", str(sheet)]) == 0
    shown = pd.read_excel(sheet, sheet_name="diff")
    assert (shown["base ms"][0], shown["new ms"][0], shown["ratio"][0]) == (1.0, 1.0, 1.0)


def test_html_of_a_diff_says_what_the_diff_says_of_its_verdicts(tmp_path):
    """The page dropped the diff's word on its own verdicts: rows of one run a side read plain
    ``slower`` (``opperf diff`` marks them indicative), and an A/B job's note of the setting its sides
    differed in was nowhere, so its base and new columns had no meaning on the page."""
    base = json.loads((DATA.parent / "verdicts3" / "b0.json").read_text())  # rows enough for a noise model
    new = another_run(base)
    for document in (base, new):
        for index, record in enumerate(document["results"]):  # on a quiet machine, each met its target
            record["competing_load"] = 0.0
            record["sampling"]["met_target"] = True
            record["flags"] = []
            factor = (1.6 if record["op"] == "exp" else 1 + 0.01 * math.sin(index)) if document is new else 1
            for phase in ("forward", "backward"):
                if record.get(phase):
                    record[phase]["samples_s"] = [s * factor for s in record[phase]["samples_s"]]
    paths = [tmp_path / "base.json", tmp_path / "new.json"]
    for path, document in zip(paths, (base, new), strict=True):
        path.write_text(json.dumps(document))
    diff, page = tmp_path / "d.json", tmp_path / "r.html"
    assert main(["diff", *map(str, paths), "--output-format", "json", "--output-file", str(diff)]) == 1
    document = json.loads(diff.read_text())
    across = (
        "Compared across values uniform-positive (base) against normal (new): each verdict is its effect."
    )
    assert document["summary"]["said"] == [INDICATIVE_NOTE]
    document["summary"]["said"].insert(0, across)  # as an A/B job's diff says it
    diff.write_text(json.dumps(document))
    assert main(["report", str(diff), "--html", str(page)]) == 0
    shown = _sections(page.read_text())
    assert re.findall(r'<p class="note">([^<]*)</p>', shown["summary"]) == [across, INDICATIVE_NOTE]
    called = sum(row["verdict"] == "slower" for row in document["rows"])
    assert called and shown["diffs"].count("slower</span> (indicative)") == called


@pytest.mark.parametrize(
    ("blocked", "arguments", "extra"),
    [
        ("matplotlib", ["report", "{mx}", "--html", "{out}/r.html"], "plot"),
        ("openpyxl", ["diff", "{diff_base}", "{diff_new}", "--output-file", "{out}/d.xlsx"], "xlsx"),
    ],
)
def test_a_missing_extra_names_the_install_command(files, tmp_path, blocked, arguments, extra):
    values = {
        "mx": files["mx"],
        "out": tmp_path,
        "diff_base": DATA / "mxnet_run1.json",
        "diff_new": DATA / "mxnet_run2.json",
    }
    command = [a.format(**values) for a in arguments]
    code = (
        f"import sys; sys.modules[{blocked!r}] = None  # importing it now raises ImportError\n"
        f"from opperf.cli import main\nsys.exit(main({command!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stderr
    assert f"pip install 'opperf[{extra}]'" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_publish_writes_an_index_operator_pages_and_regressions(site, files):
    with History(str(files["db"])) as history:
        series = history.series()
    index = (site / "index.html").read_text()
    assert index.count('<svg class="spark"') == len(series)
    assert (site / "opperf.css").is_file() and (site / "opperf.js").is_file()
    assert '<link rel="stylesheet" href="opperf.css">' in index and "<style>" not in index
    exp = (site / "ops" / "mxnet-mx.nd-exp.html").read_text()
    assert exp.count('<svg class="history"') == sum(s.key.op == "exp" for s in series)
    assert 'class="step"' in exp and 'href="../opperf.css"' in exp
    regressions = (site / "regressions.html").read_text()
    assert "mx.nd.exp(" in regressions and ">slower<" in regressions
    for page in [site / "index.html", site / "regressions.html", *(site / "ops").iterdir()]:
        assert not EXTERNAL.search(page.read_text()), page


def test_publish_takes_the_false_discovery_rate_level_history_detect_takes(files, tmp_path):
    """publish took ``--threshold`` and not ``--alpha``: its dashboard kept the steps ``history detect
    --alpha`` left out. At a level no step's q-value reaches, it marks none."""
    strict = tmp_path / "strict"
    assert (
        main(["publish", "--db", str(files["db"]), "--out", str(strict), "--alpha", "1e-300", "--quiet"]) == 0
    )
    assert ">slower<" not in (strict / "regressions.html").read_text()
    assert 'class="step"' not in (strict / "ops" / "mxnet-mx.nd-exp.html").read_text()


@needs_browser
@pytest.mark.parametrize("page", ["report", "index"])
def test_pages_run_their_script_in_a_real_browser(page, report, site, tmp_path):
    path = report if page == "report" else site / "index.html"
    tables = path.read_text().count('<table class="data"')
    dom = chromium(path.as_uri(), "--dump-dom")
    assert f'data-opperf-ready="{tables}"' in dom.stdout, dom.stderr[-2000:]
    assert "Uncaught" not in dom.stderr
    screenshot = tmp_path / "page.png"
    shot = chromium(path.as_uri(), "--window-size=1200,1600", f"--screenshot={screenshot}")
    assert screenshot.is_file() and screenshot.stat().st_size > 20_000, shot.stderr[-2000:]
