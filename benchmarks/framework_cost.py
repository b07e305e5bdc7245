"""What a benchmarked configuration costs with PyTorch against MXNet, on the same categories.

    .venv/bin/python -m benchmarks.framework_cost [--categories unary,reduction] [--threads 1] [--rounds 2]

Sweeps MXNet and PyTorch interleaved (mxnet, torch, mxnet, torch, ...), each in a fresh process through
the real command line, and prints per framework the median over rounds of the seconds per ok
configuration (the process's wall time, start to exit, over the configurations measured ok), their
ratio, and the largest peak resident memory of a sweep's worker (``worker_peak_rss_bytes``). Both
frameworks sample alike (adaptive, the same budget per configuration), so the difference is what the
harness spends around the samples. Target: PyTorch within 1.25x of MXNet, every worker under 2 GiB.
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks.sweeps import run_sweep

FRAMEWORKS = ("mxnet", "torch")
GIB = 2**30


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--categories", default="unary,reduction")
    parser.add_argument("--threads", default="1")
    parser.add_argument("--rounds", type=int, default=2)
    arguments = parser.parse_args()
    flags = ("--categories", arguments.categories, "--threads", arguments.threads)
    per_ok: dict[str, list[float]] = {framework: [] for framework in FRAMEWORKS}
    peaks: dict[str, list[int]] = {framework: [] for framework in FRAMEWORKS}
    for round_index in range(1, arguments.rounds + 1):
        for framework in FRAMEWORKS:
            sweep = run_sweep("--framework", framework, *flags)
            ok = sum(r["status"] == "ok" for r in sweep.document["results"])
            per_ok[framework].append(sweep.wall_s / ok)
            peaks[framework].append(sweep.document["environment"]["worker_peak_rss_bytes"])
            peak = peaks[framework][-1] / GIB
            print(f"round {round_index} {framework}: {sweep.wall_s:.1f} s for {ok} ok configurations "
                  f"({per_ok[framework][-1]:.3f} s each), worker peak {peak:.2f} GiB")  # fmt: skip
    medians = {framework: statistics.median(values) for framework, values in per_ok.items()}
    for framework in FRAMEWORKS:
        print(f"{framework}: {medians[framework]:.3f} s per ok configuration (median of {arguments.rounds}), "
              f"largest worker peak {max(peaks[framework]) / GIB:.2f} GiB")  # fmt: skip
    print(f"torch / mxnet per ok configuration: {medians['torch'] / medians['mxnet']:.2f}")


if __name__ == "__main__":
    main()
