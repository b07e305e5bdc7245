"""The harness's share of a sweep (``harness_efficiency``) for two checkouts, side by side.

    .venv/bin/python -m benchmarks.harness_overhead --before /work/main [--rounds 2] \\
        -- --categories unary,binary_broadcast,reduction [--framework torch --threads 1]

Sweeps alternately with the other checkout's ``opperf.py`` (before) and this one's (after), each in a
fresh process, and prints per sweep: ``harness_efficiency``, the sweep's wall time (and the whole
process's, interpreter start to report written), the seconds per configuration spent outside
sampling, the coverage counts, the passes measured (forward and backward runs together, which
must not drop) and the largest worker's peak RSS; then the medians, and after / before ratios.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.sweeps import ROOT, Sweep, run_sweep


@dataclass(frozen=True)
class Share:
    """What one sweep spent where."""

    efficiency: float
    wall_s: float
    process_s: float
    sampling_s: float
    configurations: int
    statuses: dict[str, int]
    runs: int
    worker_rss_bytes: int | None

    @classmethod
    def of(cls, sweep: Sweep) -> Share:
        environment, results = sweep.document["environment"], sweep.document["results"]
        sampling = sum((r.get("sampling") or {}).get("seconds") or 0.0 for r in results)
        runs = sum((r.get(side) or {}).get("n", 0) for r in results for side in ("forward", "backward"))
        return cls(
            efficiency=environment.get("harness_efficiency") or 0.0,
            wall_s=environment["wall_seconds"],
            process_s=sweep.wall_s,
            sampling_s=sampling,
            configurations=len(results),
            statuses=dict(Counter(r["status"] for r in results)),
            runs=runs,
            worker_rss_bytes=environment.get("worker_peak_rss_bytes"),
        )

    @property
    def outside_ms_per_configuration(self) -> float:
        return 1e3 * (self.wall_s - self.sampling_s) / max(1, self.configurations)

    def describe(self) -> str:
        return (
            f"efficiency {self.efficiency:.3f}, wall {self.wall_s:.1f} s (process {self.process_s:.1f} "
            f"s), outside sampling {self.outside_ms_per_configuration:.1f} ms per configuration, "
            f"{self.statuses}, "
            f"{self.runs} measured passes, worker peak RSS {(self.worker_rss_bytes or 0) / 2**20:.0f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--rounds", type=int, default=2, help="sweeps per checkout (alternating)")
    parser.add_argument("sweep", nargs=argparse.REMAINDER, help="opperf arguments, after --")
    arguments = parser.parse_args()
    sweep_arguments = [a for a in arguments.sweep if a != "--"]
    shares: dict[str, list[Share]] = {"before": [], "after": []}
    for _ in range(arguments.rounds):
        for side, root in (("before", arguments.before.resolve()), ("after", ROOT)):
            share = Share.of(run_sweep(*sweep_arguments, root=root))
            shares[side].append(share)
            print(f"{side}: {share.describe()}", flush=True)
    medians = {
        side: {
            "efficiency": statistics.median(s.efficiency for s in runs),
            "wall": statistics.median(s.wall_s for s in runs),
            "outside": statistics.median(s.outside_ms_per_configuration for s in runs),
        }
        for side, runs in shares.items()
    }
    for side, median in medians.items():
        print(f"median {side}: efficiency {median['efficiency']:.3f}, wall {median['wall']:.1f} s, "
              f"{median['outside']:.1f} ms outside sampling per configuration")  # fmt: skip
    before, after = medians["before"], medians["after"]
    print(f"after / before: wall {after['wall'] / before['wall']:.3f}, "
          f"outside sampling {after['outside'] / before['outside']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
