"""``opperf list``: the operators a sweep would run, with their category, entry point and aliases,
without running anything; ``--tags`` alone lists the long-tail operators' tags with their counts and
members."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable

from tabulate import tabulate

from opperf.cli.common import SHOW_TAGS, add_selection, add_tag_selection, selected_tags
from opperf.frameworks import get_backend
from opperf.operators import longtail
from opperf.results.options import option_argument
from opperf.sweep.run import select_operators
from opperf.utils.words import counted

HELP = "list the operators a sweep would run (name, category, entry point, aliases)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    option_argument(parser, "framework")
    add_selection(parser)
    add_tag_selection(parser, listing=True)


def run(arguments: argparse.Namespace) -> int:
    backend = get_backend(arguments.framework)
    tags = selected_tags(arguments)
    operators = select_operators(backend, arguments.ops, arguments.categories, tags, arguments.tags_all)
    if arguments.tags == SHOW_TAGS:
        print(render_tags(op.name for op in operators))
        return 0
    rows = [
        [op.name, op.category, f"{op.namespaces[0]}.{op.function_name}", ", ".join(op.aliases)]
        for op in operators
    ]
    print(tabulate(rows, headers=("operator", "category", "called as", "aliases"), tablefmt="simple"))
    counts = Counter(op.category for op in operators)
    listed = ", ".join(f"{category} {count}" for category, count in sorted(counts.items()))
    found = counted(len(operators), f"{arguments.framework} operator")
    print(f"\n{found} in {counted(len(counts), 'category')}: {listed}")
    return 0


def render_tags(names: Iterable[str]) -> str:
    """The DLOP-Bench tags of the long-tail operators among ``names``: count and members per tag."""
    names = list(names)
    found = longtail.tag_counts(names)
    rows = [[tag, len(members), ", ".join(members)] for tag, members in found.items()]
    chosen = sum(1 for name in names if name in longtail.by_name())
    table = tabulate(rows, headers=("tag", "operators", "members"), tablefmt="simple")
    return f"{table}\n\n{len(found)} tags over {chosen} long-tail operators (category {longtail.CATEGORY})"
