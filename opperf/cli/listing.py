"""``opperf list``: the operators a sweep would run, with their category, entry point and aliases,
without running anything."""

from __future__ import annotations

import argparse
from collections import Counter

from tabulate import tabulate

from opperf.cli.common import add_selection
from opperf.frameworks import FRAMEWORKS, get_backend
from opperf.sweep import select_operators

HELP = "list the operators a sweep would run (name, category, entry point, aliases)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--framework", default="mxnet", choices=tuple(FRAMEWORKS), help="whose registry")
    add_selection(parser)


def run(arguments: argparse.Namespace) -> int:
    backend = get_backend(arguments.framework)
    operators = select_operators(backend, arguments.ops, arguments.categories)
    rows = [
        [op.name, op.category, f"{op.namespaces[0]}.{op.function_name}", ", ".join(op.aliases)]
        for op in operators
    ]
    print(tabulate(rows, headers=("operator", "category", "called as", "aliases"), tablefmt="simple"))
    counts = Counter(op.category for op in operators)
    listed = ", ".join(f"{category} {count}" for category, count in sorted(counts.items()))
    print(f"\n{len(operators)} {arguments.framework} operators in {len(counts)} categories: {listed}")
    return 0
