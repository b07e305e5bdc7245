"""``opperf compare NAMESPACES``: each operator in each namespace (of one framework or several, as
each declares them) on the same input configurations, in rounds in which the namespaces take turns; each other
namespace's ratio against the first with its 95% interval and verdict, as one Markdown table, or as a
JSON document (every record, and the rows that pair them)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys

from opperf.cli.common import (
    add_affinity,
    add_isolation,
    add_quiet,
    add_timeout,
    check_outputs,
    names,
    report_format,
    whole,
    write_or_print,
)
from opperf.cli.progress import Stages, wanted
from opperf.frameworks import FRAMEWORKS, command_threads, describe, framework_of_namespace, get_backend
from opperf.report.json_report import render_json
from opperf.results.options import RunOptions
from opperf.sweep.run import DEFAULT_TIMEOUT_S
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically
from opperf.utils.signals import exit_status, stop_on_signals
from opperf.utils.words import counted
from opperf.verdicts.compare.calls import check_devices, check_namespaces, check_operators
from opperf.verdicts.compare.comparison import (
    COMPARE_MIN_ROUNDS,
    COMPARE_ROUNDS,
    compare_operators,
    comparison_options,
)
from opperf.verdicts.compare.measuring import InWorkers, in_process
from opperf.verdicts.compare.rendering import comparison_document
from opperf.verdicts.compare.rendering import render_markdown as render_comparison
from opperf.verdicts.compare.selection import COMMON, DEFAULT_OPERATORS, common_functions, configurations

HELP = "compare one operator across namespaces, of one framework or several, on the same inputs"
FORMATS = ("md", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "namespaces",
        type=names,
        metavar="NAMESPACES",
        help="comma-separated namespaces, the first the base the others are judged against ("
        + "; ".join(describe(name).namespaces for name in sorted(FRAMEWORKS))
        + ")",
    )
    parser.add_argument(
        "--ops",
        default=(),
        type=names,
        help=f"operators named as in the first namespace, or {COMMON}: every function the first "
        "namespace has that each other namespace has a counterpart of (default: "
        + ", ".join(DEFAULT_OPERATORS)
        + ")",
    )
    parser.add_argument("--output-file", default=None, help="write the table here (default: print it)")
    parser.add_argument(
        "--output-format",
        default=None,
        choices=FORMATS,
        help="md (the table) or json (every record and the rows pairing them) (default: from "
        "--output-file's extension, else md)",
    )
    parser.add_argument("--json-file", default=None, help="also write the JSON document here")
    parser.add_argument(
        "--rounds",
        type=whole(1, "rounds"),
        default=COMPARE_ROUNDS,
        help="the most rounds a configuration is measured in, the namespaces taking turns: "
        f"{COMPARE_MIN_ROUNDS} (fewer when --rounds is), then another while a verdict of it is "
        "unsettled; each other namespace gets a ratio with its interval and a verdict against the "
        f"first (default: {COMPARE_ROUNDS})",
    )
    add_timeout(parser, "one round of a configuration in one namespace", DEFAULT_TIMEOUT_S)
    add_isolation(parser, "every namespace")
    add_affinity(parser, "each framework's worker")
    add_quiet(parser)
    RunOptions.add_arguments(parser)


def run(arguments: argparse.Namespace) -> int:
    namespaces = arguments.namespaces
    chosen = report_format(arguments.output_format, arguments.output_file, default="md")
    if chosen not in FORMATS:
        raise OpperfError(f"a comparison is written as {' or '.join(FORMATS)}, not {chosen}")
    check_outputs(
        ("--output-file", arguments.output_file, f"comparison.{chosen}"),
        ("--json-file", arguments.json_file, "comparison.json"),
    )
    options = comparison_options(RunOptions.from_arguments(arguments, device=arguments.device or "cpu"))
    check_namespaces(namespaces)
    # each framework's thread count: one it refuses (JAX's --threads 3 on 2 CPUs) is refused before
    # anything runs; measured here, one that fixes its pool as it starts (JAX) is set before it starts
    for framework in dict.fromkeys(framework_of_namespace(namespace) for namespace in namespaces):
        command_threads(get_backend(framework), options.threads, in_workers=not arguments.no_isolation)
    check_devices(namespaces, options)
    rounds = getattr(arguments, "rounds", COMPARE_ROUNDS)  # sweep --compare takes the default
    operators = arguments.ops or DEFAULT_OPERATORS
    if tuple(operators) == (COMMON,):
        operators = common_functions(namespaces)
    check_operators(operators, namespaces[0])
    stages = Stages("compare", wanted(arguments))
    with contextlib.ExitStack() as stack:
        stack.callback(stages.close)
        measure = (
            in_process
            if arguments.no_isolation
            else stack.enter_context(InWorkers(arguments.timeout, arguments.affinity, options.threads))
        )
        found = {}
        for index, name in enumerate(operators):
            stages(f"inputs of {name} ({index + 1} of {len(operators)})")
            found[name] = configurations(name, namespaces)

        def report(index: int, measured: int) -> None:
            stages(f"round {index + 1} (at most {rounds}): {counted(measured, 'configuration')}")

        with stop_on_signals() as stopping:
            comparison = compare_operators(
                found, namespaces, options, rounds, measure=measure, progress=report
            )
            stopping.settle()  # from here a stop is noted: what was measured is written
    if comparison.stop is not None and not comparison.rows:
        raise comparison.stop  # nothing to write: main says so, with the signal's status
    document = comparison_document(comparison, namespaces, options, sys.argv)
    rendered = (
        render_json(document)
        if chosen == "json"
        else render_comparison(comparison, namespaces, options.threads)
    )
    write_or_print(rendered, arguments.output_file)
    if arguments.json_file:
        write_atomically(arguments.json_file, render_json(document))
    number = comparison.signal_number
    if number is not None:
        print(
            f"interrupted ({signal.Signals(number).name}) after {len(comparison.rows)} of "
            f"{counted(comparison.selected, 'configuration')}: what finished is written",
            file=sys.stderr,
        )
        return exit_status(number)
    return exit_status(stopping.received[0]) if stopping.received else 0
