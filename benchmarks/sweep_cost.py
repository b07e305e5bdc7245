"""Adaptive sampling against the original fixed counts (25 warm-up, 100 runs) on the same operators.

    .venv/bin/python -m benchmarks.sweep_cost [--categories ...]   # default: every operator

Each mode sweeps twice, in fresh processes, one after the other: the wall times say what each costs,
and the two sweeps of a mode say how repeatable it is. Target: adaptive at most a third of fixed, with
equal or better repeatability.
"""

from __future__ import annotations

import argparse

from benchmarks.sweeps import compare, run_sweep

FIXED = ("--warmup", "25", "--runs", "100")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--categories", default="", help="comma-separated categories (default: all)")
    arguments = parser.parse_args()
    selection = ("--categories", arguments.categories) if arguments.categories else ()
    walls = {}
    for mode, flags in (("adaptive", ()), ("fixed 25/100", FIXED)):
        first, second = run_sweep(*selection, *flags), run_sweep(*selection, *flags)
        walls[mode] = min(first.wall_s, second.wall_s)
        print(f"{mode}: {first.wall_s:.1f} s and {second.wall_s:.1f} s; "
              f"{compare(first.document, second.document).describe()}")  # fmt: skip
    print(f"adaptive / fixed wall time: {walls['adaptive'] / walls['fixed 25/100']:.2f}")


if __name__ == "__main__":
    main()
