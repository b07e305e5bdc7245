"""A benchmark worker process: ``python -m opperf.measure.worker FRAMEWORK [--threads N] [--cpus LIST]
[--compiled DIR]``.

Started by ``opperf.measure.isolation.IsolatedRunner``; it speaks that module's protocol on stdin and stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from opperf.measure.isolation import worker_main
from opperf.utils.affinity import parse_cpu_list


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m opperf.measure.worker", description=__doc__)
    parser.add_argument("framework")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads")
    parser.add_argument("--cpus", type=parse_cpu_list, default=None, help="CPUs to pin to, e.g. 1 or 0,2-3")
    parser.add_argument("--compiled", default=None, help="the runner's folder for compiled programs")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_arguments(sys.argv[1:])
    worker_main(arguments.framework, arguments.threads, arguments.cpus, arguments.compiled)
