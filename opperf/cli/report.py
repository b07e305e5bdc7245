"""``opperf report FILE... --output-file OUT.html``: one self-contained HTML page over results files,
diff files (``opperf diff --output-format json``) and A/B files (``opperf ab``, shown as their diff):
the environment and coverage, plots (time by category, roofline, distributions, namespace
comparisons, diff waterfalls, and thread, stage and tag sections where such records exist) and
sortable, filterable tables. It loads nothing from the network, so it opens from ``file://``. Plots
need the ``opperf[plot]`` extra (matplotlib).
"""

from __future__ import annotations

import argparse
import sys

from opperf.cli.common import check_writable
from opperf.report.charts import pyplot
from opperf.report.html_report import render_html
from opperf.report.inputs import read_inputs
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically

HELP = "an offline HTML page with plots and tables over result and diff files (needs opperf[plot])"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON results files and diff files")
    parser.add_argument(
        "--output-file",
        "--html",
        dest="output_file",
        required=True,
        metavar="OUT.html",
        help="where to write the page (--html is the same flag)",
    )


def run(arguments: argparse.Namespace) -> int:
    if not arguments.output_file.lower().endswith((".html", ".htm")):
        raise OpperfError(
            f"--output-file {arguments.output_file!r} should name an .html file, e.g. report.html"
        )
    check_writable(arguments.output_file, "--output-file", "report.html")
    pyplot()  # the extra's error before any file is read
    text = render_html(read_inputs(arguments.files))
    write_atomically(arguments.output_file, text)
    print(f"report: {arguments.output_file} ({len(text.encode()) / 1e6:.2f} MB)", file=sys.stderr)
    return 0
