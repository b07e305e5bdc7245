"""``opperf history add|show|detect|runs|remove``: result files over time in an embedded SQLite store
(the files stay the source of truth; adding them again rebuilds it), and steps in each
configuration's level.

``detect`` reports every step larger than ``max(--threshold, the series' own noise, 1.5 ticks of a
quantising timer)`` that held for at least three runs, once each run's machine factor is taken out (a
move most configurations share is named in a note, no configuration's step),
and that holds at the FDR level ``--alpha`` over every step of every series; with ``--fail-on
regression`` it exits 1 when a configuration's current level is a step up (a regression not yet
undone). Only ``add`` creates a store; ``show``, ``detect`` and ``publish`` refuse a ``--db`` that
is none.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from opperf.cli.common import fraction
from opperf.results.document import is_ab, read_document
from opperf.results.inputs import describe_inputs
from opperf.utils.errors import OpperfError
from opperf.utils.markdown_table import printable, terminal_table
from opperf.utils.words import counted
from opperf.verdicts.decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD
from opperf.verdicts.history import HistoryStore, open_history
from opperf.verdicts.history.notes import machine_notes
from opperf.verdicts.history.steps import Step, steps_of
from opperf.verdicts.history.store import Series, run_records

ADD_FIX = "add the JSON results files of sweeps (`opperf --output-format json` or `--json-file`)"
HELP = "keep result files' figures over time (SQLite) and detect steps: add, show, detect, runs, remove"
DEFAULT_DB = "opperf-history.sqlite"
MS = 1e3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add JSON result files to the store (created if absent)")
    add.add_argument("files", nargs="+", metavar="RESULTS", help="JSON results files")
    show = actions.add_parser("show", help="one operator's figures over the runs, with steps marked")
    show.add_argument(
        "--op",
        required=True,
        help="the operator's registry name (Convolution), or one configuration as detect prints it "
        "(mx.nd.exp(data=10000x1))",
    )
    show.add_argument(
        "--inputs",
        default=None,
        help="only configurations with these inputs, as reports print them (data=32x16, or a shape: 32x16)",
    )
    detect = actions.add_parser("detect", help="steps in every configuration's history")
    detect.add_argument(
        "--op",
        default=None,
        help="only this operator, or one configuration as detect prints it (mx.nd.exp(data=10000x1))",
    )
    detect.add_argument("--fail-on", choices=("regression", "never"), default="never", help="exit 1 when a "
                        "configuration's current level is a step up (default: never)")  # fmt: skip
    runs = actions.add_parser("runs", help="the runs in the store, with the ids remove takes")
    remove = actions.add_parser("remove", help="take a run out of the store")
    remove.add_argument("run", metavar="RUN", help="the run's id (history runs lists them) or its file")
    for action in (add, show, detect, runs, remove):
        action.add_argument("--db", default=DEFAULT_DB, help=f"the history database (default: {DEFAULT_DB})")
    for action in (show, detect):
        add_step_options(action)


def add_step_options(parser: argparse.ArgumentParser) -> None:
    """``--threshold`` and ``--alpha`` of the steps in a store's series (``history show|detect``,
    ``publish``)."""
    parser.add_argument(
        "--threshold",
        type=fraction,
        default=DEFAULT_THRESHOLD,
        help=f"smallest step worth reporting ({DEFAULT_THRESHOLD:g})",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=DEFAULT_ALPHA,
        help=f"false discovery rate level over every step of every series ({DEFAULT_ALPHA})",
    )


def run(arguments: argparse.Namespace) -> int:
    if arguments.action == "add":  # every file read before the store is opened, or one is added
        documents = [(path, read_document(path, ADD_FIX)) for path in arguments.files]
        for path, document in documents:
            if is_ab(document):
                raise OpperfError(f"{path}: an A/B file holds two builds; {ADD_FIX}")
            run_records(document, path)  # a file repeating a configuration: refused before a store is made
        with open_history(arguments.db, create=True) as history:
            if history.created:
                print(f"created the history database {arguments.db}", file=sys.stderr)
            return _add(history, documents)
    with open_history(arguments.db) as history:
        if arguments.action == "runs":
            return _runs(history)
        if arguments.action == "remove":
            removed = history.remove(arguments.run)
            print(
                f"removed run {removed.id} ({removed.source}, {counted(removed.rows, 'row')}); "
                f"{counted(history.run_count(), 'run')} left",
                file=sys.stderr,
            )
            return 0
        if arguments.action == "show":
            return _show(history, arguments)
        return _detect(history, arguments)


def _add(history: HistoryStore, documents: list[tuple[str, dict[str, Any]]]) -> int:
    for path, document in documents:
        added = history.add(document, path)
        print(
            f"{printable(path)}: "
            + ("already in the store" if added is None else f"{counted(added, 'row')} added"),
            file=sys.stderr,
        )
    print(f"{counted(history.run_count(), 'run')} in the store", file=sys.stderr)
    return 0


def _runs(history: HistoryStore) -> int:
    rows = [[run.id, run.started[:19], run.rows, run.source] for run in history.stored_runs()]
    print(terminal_table(rows, headers=("run", "started", "rows", "file")))
    return 0


def _judged(every: list[Series], arguments: argparse.Namespace) -> list[tuple[Series, list[Step]]]:
    """Every series of the store (``every``) with its steps, judged over all of them; those ``--op``
    (and ``--inputs``) choose. A choice that finds none is an error: ``show`` would print nothing,
    and ``detect --fail-on`` pass its gate having looked at nothing (a typo, or ``add`` for
    ``broadcast_add``)."""
    steps = steps_of(every, arguments.threshold, arguments.alpha)
    op, inputs = arguments.op, getattr(arguments, "inputs", None)
    chosen = {id(s) for s in history_filter(every, op, inputs)}
    if not chosen and (op or inputs):
        _none_chosen(every, op, inputs, arguments.db)
    return [(s, found) for s, found in zip(every, steps, strict=True) if id(s) in chosen]


def _none_chosen(every: list[Series], op: str | None, inputs: str | None, db: str) -> None:
    """OpperfError for an ``--op`` (and ``--inputs``) that chose no series: the operator the store
    lacks, or the configuration it lacks, listing those the operator has."""
    operator = op.partition("(")[0] if op else None
    of_op = history_filter(every, operator, None)
    if not of_op or (inputs is None and operator == op):
        raise OpperfError(
            f"no history of {op!r} in {db}; name an operator as the store has it (`history detect` lists "
            "them), or add result files with `history add`"
        )
    held = sorted({describe_inputs(json.loads(s.key.inputs)) for s in of_op})
    shown = "; ".join(held[:5]) + (f"; and {len(held) - 5} more" if len(held) > 5 else "")
    wanted = f"inputs {inputs!r}" if inputs is not None else f"the name {op!r}"
    raise OpperfError(f"no configuration of {operator} has {wanted}; it has: {shown}")


def history_filter(series: list[Series], op: str | None, inputs: str | None) -> list[Series]:
    """The series ``op`` names (``_named``) whose inputs hold ``inputs`` whole (``inputs_match``)."""
    return [
        s
        for s in series
        if (op is None or _named(s, op)) and (inputs is None or inputs_match(inputs, s.key.inputs))
    ]


def _named(series: Series, op: str) -> bool:
    """Whether ``op`` names ``series``: its operator (the registry name, or as labels print it:
    ``jax.lax.exp``), or a configuration as ``detect`` prints it, whole or up to a space
    (``mx.nd.exp(data=10000x1)``, ``mx.nd.exp(data=10000x1) [graph]``, ``... forward``)."""
    if "(" in op:
        return series.label == op or series.label.startswith(f"{op} ")
    return op in (series.key.op, series.key.name)


def inputs_match(wanted: str, stored: str) -> bool:
    """Whether a configuration's inputs (``stored``: its key's JSON) hold ``wanted`` as reports print
    them (``data=10000x1``, ``lhs=32x16, rhs=32x16``, or a shape alone, ``32x16``), spaces aside, as
    whole values: ``data=10000x1`` is not ``data=10000x100``. The JSON form is taken as it is."""
    if wanted == stored:
        return True
    shown = re.sub(r"\s+", "", describe_inputs(json.loads(stored)))
    pattern = re.escape(re.sub(r"\s+", "", wanted))
    return re.search(rf"(?<![\w.]){pattern}(?![\w.])", shown) is not None


def _show(history: HistoryStore, arguments: argparse.Namespace) -> int:
    for series, steps in _judged(history.series(), arguments):
        at = {step.index: step for step in steps}
        rows = [
            [
                point.started[:19],
                f"{point.median * MS:.4g}",
                f"{point.low * MS:.4g}-{point.high * MS:.4g}",
                ",".join(point.flags),
                f"step x{at[index].ratio:.3g}" if index in at else "",
                point.source,
            ]
            for index, point in enumerate(series.points)
        ]
        print(printable(series.label))
        print(terminal_table(rows, headers=("started", "median ms", "95% interval", "flags", "", "file")))
        print()
    return 0


def _detect(history: HistoryStore, arguments: argparse.Namespace) -> int:
    reported, current_regressions = [], 0
    every = history.series()
    judged = _judged(every, arguments)
    for series, steps in judged:
        for step in steps:
            current = step is steps[-1]
            current_regressions += step.regression and current
            reported.append(_step_row(series, step, current))
    if reported:
        headers = ("configuration", "step", "ratio", "noise", "q", "at run", "current level")
        print(terminal_table(reported, headers=headers))
    print(
        f"{counted(len(reported), 'step')} in {counted(len(judged), 'series', 'series')}; "
        f"{counted(current_regressions, 'configuration')} at a regressed level",
        file=sys.stderr,
    )
    runs = {run.id: run for run in history.stored_runs()}
    for note in machine_notes(every, runs, arguments.threshold):
        print(f"note: {note}", file=sys.stderr)
    return 1 if arguments.fail_on == "regression" and current_regressions else 0


def _step_row(series: Series, step: Step, current: bool) -> list[str]:
    point = series.points[step.index]
    return [
        series.label,
        "slower" if step.regression else "faster",
        f"x{step.ratio:.3g}",
        f"±{step.noise:.1%}",
        f"{step.q:.3g}",
        f"{point.started[:19]} ({point.source})",
        "yes" if current else "no",
    ]
