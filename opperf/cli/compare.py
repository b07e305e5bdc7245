"""``opperf compare NAMESPACES``: each operator in each namespace (``mx.nd``, ``mx.np``, ``torch``) on
the same input configurations, as one Markdown table with forward ratios against the first."""

from __future__ import annotations

import argparse

from opperf.cli.common import check_writable, names, write_or_print
from opperf.comparison import DEFAULT_OPERATORS, compare, configurations
from opperf.comparison import render_markdown as render_comparison
from opperf.options import RunOptions

HELP = "compare one operator across namespaces (mx.nd, mx.np, torch) on the same inputs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "namespaces",
        type=names,
        metavar="NAMESPACES",
        help="comma-separated namespaces, e.g. mx.nd,mx.np,torch",
    )
    parser.add_argument(
        "--ops",
        default=(),
        type=names,
        help="operators named as in the first namespace (default: " + ", ".join(DEFAULT_OPERATORS) + ")",
    )
    parser.add_argument("--output-file", default=None, help="write the table here (default: print it)")
    RunOptions.add_arguments(parser)


def run(arguments: argparse.Namespace) -> int:
    namespaces = arguments.namespaces
    options = RunOptions.from_arguments(arguments, device=arguments.device or "cpu")
    if arguments.output_file:
        check_writable(arguments.output_file)
    rows = [
        row
        for name in arguments.ops or DEFAULT_OPERATORS
        for row in compare(name, configurations(name, namespaces[0]), namespaces, options)
    ]
    write_or_print(render_comparison(rows, namespaces), arguments.output_file)
    return 0
