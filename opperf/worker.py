"""A benchmark worker process: ``python -m opperf.worker FRAMEWORK [--threads N] [--cpus LIST]``.

Started by ``opperf.isolation.IsolatedRunner``; it speaks that module's protocol on stdin and stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from opperf.isolation import worker_main
from opperf.utils.affinity import parse_cpu_list
from opperf.zygote import zygote_main


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m opperf.worker", description=__doc__)
    parser.add_argument("framework")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads")
    parser.add_argument("--cpus", type=parse_cpu_list, default=None, help="CPUs to pin to, e.g. 1 or 0,2-3")
    parser.add_argument(
        "--zygote",
        type=int,
        default=None,
        metavar="FD",
        help="be a fork server on this socket (opperf.zygote)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_arguments(sys.argv[1:])
    if arguments.zygote is not None:
        zygote_main(arguments.framework, arguments.threads, arguments.cpus, arguments.zygote)
    else:
        worker_main(arguments.framework, arguments.threads, arguments.cpus)
