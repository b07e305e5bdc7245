"""``opperf history add|show|detect``: result files over time in an embedded SQLite store (the files
stay the source of truth; adding them again rebuilds it), and steps in each configuration's level.

``detect`` reports every step larger than ``max(--threshold, the series' own noise)`` that held for at
least two runs; with ``--fail-on regression`` it exits 1 when a configuration's current level is a
step up (a regression not yet undone).
"""

from __future__ import annotations

import argparse
import sys

from tabulate import tabulate

from opperf.cli.common import fraction
from opperf.errors import OpperfError
from opperf.history.steps import detect_steps
from opperf.history.store import History, Series
from opperf.report.document import read_document
from opperf.utils.words import counted

ADD_FIX = "add the JSON results files of sweeps (`opperf --output-format json` or `--json-file`)"
HELP = "keep result files' figures over time (SQLite) and detect steps: add, show, detect"
DEFAULT_DB = "opperf-history.sqlite"
MS = 1e3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add JSON result files to the store")
    add.add_argument("files", nargs="+", metavar="RESULTS", help="JSON results files")
    show = actions.add_parser("show", help="one operator's figures over the runs, with steps marked")
    show.add_argument("--op", required=True, help="the operator's registry name, e.g. Convolution")
    show.add_argument("--inputs", default=None, help="only configurations whose inputs contain this text")
    detect = actions.add_parser("detect", help="steps in every configuration's history")
    detect.add_argument("--op", default=None, help="only this operator")
    detect.add_argument("--fail-on", choices=("regression", "never"), default="never", help="exit 1 when a "
                        "configuration's current level is a step up (default: never)")  # fmt: skip
    for action in (add, show, detect):
        action.add_argument("--db", default=DEFAULT_DB, help=f"the history database (default: {DEFAULT_DB})")
    for action in (show, detect):
        action.add_argument(
            "--threshold", type=fraction, default=0.05, help="smallest step worth reporting (0.05)"
        )


def run(arguments: argparse.Namespace) -> int:
    if arguments.action == "add":  # every file read before the store is opened, or one is added
        documents = [(path, read_document(path, ADD_FIX)) for path in arguments.files]
        with History(arguments.db) as history:
            return _add(history, documents)
    with History(arguments.db) as history:
        if arguments.action == "show":
            return _show(history, arguments)
        return _detect(history, arguments)


def _add(history: History, documents: list[tuple[str, dict[str, object]]]) -> int:
    for path, document in documents:
        added = history.add(document, path)
        print(
            f"{path}: " + ("already in the store" if added is None else f"{counted(added, 'row')} added"),
            file=sys.stderr,
        )
    print(f"{counted(history.runs(), 'run')} in the store", file=sys.stderr)
    return 0


def _show(history: History, arguments: argparse.Namespace) -> int:
    found = history.series(arguments.op, arguments.inputs)
    if not found:
        raise OpperfError(
            f"no history of {arguments.op!r} in {arguments.db}; add result files with `history add`"
        )
    for series in found:
        steps = {
            step.index: step for step in detect_steps([p.median for p in series.points], arguments.threshold)
        }
        rows = [
            [
                point.started[:19],
                f"{point.median * MS:.4g}",
                f"{point.low * MS:.4g}-{point.high * MS:.4g}",
                ",".join(point.flags),
                f"step x{steps[index].ratio:.3g}" if index in steps else "",
                point.source,
            ]
            for index, point in enumerate(series.points)
        ]
        print(series.label)
        print(tabulate(rows, headers=("started", "median ms", "95% interval", "flags", "", "file")))
        print()
    return 0


def _detect(history: History, arguments: argparse.Namespace) -> int:
    reported, current_regressions = [], 0
    for series in history.series(arguments.op):
        steps = detect_steps([p.median for p in series.points], arguments.threshold)
        for step in steps:
            current = step is steps[-1]
            current_regressions += step.regression and current
            reported.append(_step_row(series, step, current))
    if reported:
        headers = ("configuration", "step", "ratio", "noise", "at run", "current level")
        print(tabulate(reported, headers=headers))
    print(
        f"{len(reported)} steps in {len(history.series(arguments.op))} series; "
        f"{current_regressions} configurations are at a regressed level",
        file=sys.stderr,
    )
    return 1 if arguments.fail_on == "regression" and current_regressions else 0


def _step_row(series: Series, step, current: bool) -> list[str]:
    point = series.points[step.index]
    return [
        series.label,
        "slower" if step.regression else "faster",
        f"x{step.ratio:.3g}",
        f"±{step.noise:.1%}",
        f"{point.started[:19]} ({point.source})",
        "yes" if current else "no",
    ]
