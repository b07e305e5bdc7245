"""``opperf publish --db HISTORY --output-file DIR``: a static dashboard over the history store (``opperf
history add``): an index of every configuration with its latest median, change against the previous
run and the best, a sparkline and flags; a page per operator with each configuration's history
(median, 95% interval band, detected steps); and a regressions page. Plain files: open
``DIR/index.html`` from ``file://`` or copy the folder to any web host.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opperf.cli.common import add_quiet
from opperf.cli.history import add_step_options
from opperf.cli.progress import CountBar, wanted
from opperf.report.dashboard import check_replaceable, publish
from opperf.utils.errors import OpperfError
from opperf.utils.words import counted
from opperf.verdicts.history import open_history
from opperf.verdicts.history.notes import machine_notes

HELP = "a static HTML dashboard over the history store: index, a page per operator, regressions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", required=True, metavar="HISTORY", help="the history database (opperf history)"
    )
    parser.add_argument(
        "--output-file",
        "--out",
        dest="output_file",
        required=True,
        metavar="DIR",
        help="the folder to write the pages into (--out is the same flag)",
    )
    add_step_options(parser)
    add_quiet(parser)


def run(arguments: argparse.Namespace) -> int:
    out = Path(arguments.output_file)
    check_replaceable(out)
    with open_history(arguments.db) as history:
        runs, series = {run.id: run for run in history.stored_runs()}, history.series()
    if not series:
        raise OpperfError(f"{arguments.db}: no runs with results; add result files with `opperf history add`")
    bar = CountBar("publish", "files") if wanted(arguments) else None
    try:
        notes = machine_notes(series, runs, arguments.threshold)
        written = publish(series, len(runs), out, arguments.threshold, arguments.alpha, bar, notes)
    finally:
        if bar is not None:
            bar.close()
    print(
        f"dashboard: {out / 'index.html'} ({counted(len(written), 'file')}, {counted(len(runs), 'run')})",
        file=sys.stderr,
    )
    return 0
