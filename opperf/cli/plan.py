"""``opperf plan --shards N``: how a sweep of the selection would split into N shards, each shard's
operators, input configurations and expected time, without running anything. With ``--costs
PREVIOUS.json`` the split and the times are a previous sweep's seconds (``opperf.sweep.costs``);
without, counts of input configurations, and a time only where a previous sweep says what one costs.
"""

from __future__ import annotations

import argparse
import statistics

from tabulate import tabulate

from opperf.cli.common import add_costs, add_selection, whole
from opperf.frameworks import get_backend
from opperf.operators.rules import NoRuleError
from opperf.results.options import RunOptions, SweepFactors, option_argument
from opperf.sweep.costs import read_costs
from opperf.sweep.run import SweepConfig, configurations_for, select_operators, shard_plan

HELP = "print how a sweep would split into shards: each shard's operators and expected time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shards", required=True, type=whole(1, "shards"), help="how many shards")
    option_argument(parser, "framework")
    option_argument(parser, "seed")
    # what changes an operator's configurations, and so the split: the shapes a sweep draws
    SweepFactors.add_arguments(parser, leaving_out=("thread_counts", "stages", "in_place"))
    add_selection(parser)
    add_costs(parser)


def run(arguments: argparse.Namespace) -> int:
    backend = get_backend(arguments.framework)
    costs = read_costs(arguments.costs, arguments.framework) if arguments.costs else None
    config = SweepConfig(
        options=RunOptions(framework=arguments.framework, seed=arguments.seed),
        factors=SweepFactors.from_arguments(arguments).validated(arguments.framework),
        costs=costs,
    )
    operators = select_operators(backend, arguments.ops, arguments.categories)
    planned = shard_plan(operators, config, arguments.shards)
    unit = "expected s" if costs else "configurations (expected cost)"
    rows = []
    for index, shard in enumerate(planned, start=1):
        rows.append(
            [f"{index}/{arguments.shards}", len(shard), _configurations(shard, config), _total(shard)]
        )
    print(tabulate(rows, headers=("shard", "operators", "configurations", unit), tablefmt="simple"))
    totals = [_total(shard) for shard in planned]
    mean = statistics.fmean(totals)
    print(f"\nlargest shard {max(totals) / mean:.3f}x the mean" if mean else "\nnothing to run")
    for index, shard in enumerate(planned, start=1):
        print(f"\nshard {index}/{arguments.shards}: {', '.join(op.name for op, _ in shard) or '(none)'}")
    return 0


def _total(shard: list) -> float:
    return round(sum(cost for _, cost in shard), 3)


def _configurations(shard: list, config: SweepConfig) -> int:
    count = 0
    for op, _ in shard:
        try:
            count += len(configurations_for(op, config))
        except NoRuleError:
            continue
    return count
