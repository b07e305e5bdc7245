"""Native profiler against Python timer, side by side in one process, on a few operators.

    .venv/bin/python benchmarks/timers.py [--runs 100] [--rounds 3]

For each operator and round: the median forward and backward time by each strategy, and the ratio
python/native. Rounds alternate the strategies so drift on a noisy machine affects both alike. The
Python timer includes dispatch and the engine's hand-off; the native profiler is the kernel alone.
"""

from __future__ import annotations

import argparse
import statistics

import mxnet as mx
from tabulate import tabulate

from opperf import RunOptions, benchmark

CASES = (
    ("add", mx.nd.add, {"lhs": (1024, 1024), "rhs": (1024, 1024)}),
    ("exp", mx.nd.exp, {"data": (1024, 1024)}),
    ("dot", mx.nd.dot, {"lhs": (512, 512), "rhs": (512, 512)}),
    ("add (1 element)", mx.nd.add, {"lhs": (1,), "rhs": (1,)}),
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    rows = []
    for name, function, inputs in CASES:
        medians: dict[str, list[tuple[float, float]]] = {"native": [], "python": []}
        for _ in range(arguments.rounds):
            for profiler, samples in medians.items():
                options = RunOptions(warmup=10, runs=arguments.runs, profiler=profiler)
                (m,) = benchmark(function, [inputs], options)
                samples.append((m.forward_summary.median, m.backward_summary.median))
        native_fwd = statistics.median(f for f, _ in medians["native"])
        python_fwd = statistics.median(f for f, _ in medians["python"])
        native_bwd = statistics.median(b for _, b in medians["native"])
        python_bwd = statistics.median(b for _, b in medians["python"])
        rows.append(
            [
                name,
                native_fwd * 1e3,
                python_fwd * 1e3,
                python_fwd / native_fwd,
                native_bwd * 1e3,
                python_bwd * 1e3,
                python_bwd / native_bwd,
            ]
        )
    print(
        f"MXNet {mx.__version__}, engine from MXNET_ENGINE_TYPE (default threaded), medians of "
        f"{arguments.rounds} rounds of {arguments.runs} runs"
    )
    print(
        tabulate(
            rows,
            headers=(
                "operator",
                "fwd native ms",
                "fwd python ms",
                "ratio",
                "bwd native ms",
                "bwd python ms",
                "ratio",
            ),
            floatfmt=".4f",
        )
    )


if __name__ == "__main__":
    main()
