"""Two back-to-back sweeps of a fixed operator subset, each in a fresh process: how far medians move.

    .venv/bin/python -m benchmarks.repeatability [--categories unary,binary_broadcast,...] [-- opperf flags]

Reports the median and p90 over configurations of |log(median ratio)| between the two sweeps, and how
many of the configurations that moved more than 5% carried a noise or precision flag. Target: median
under 5%, and the flag raised on the ones that move more.
"""

from __future__ import annotations

import argparse

from benchmarks.sweeps import compare, run_sweep

SUBSET = "unary,binary_broadcast,reduction,gemm,pooling,convolution,activation,nn_basic"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--categories", default=SUBSET)
    parser.add_argument("opperf_flags", nargs=argparse.REMAINDER, help="passed on to opperf.py")
    arguments = parser.parse_args()
    flags = ["--categories", arguments.categories, *arguments.opperf_flags]
    first, second = run_sweep(*flags), run_sweep(*flags)
    print(f"sweeps of {arguments.categories}: {first.wall_s:.1f} s and {second.wall_s:.1f} s")
    print(compare(first.document, second.document).describe())


if __name__ == "__main__":
    main()
