"""How evenly shards split a sweep's time when a previous run's costs balance them (issue 32's target:
the most expensive shard within 1.15x of the mean, over 4 and 8 shards).

    .venv/bin/python -m benchmarks.shard_balance [--framework mxnet] [--costs PREVIOUS.json]
        [--shards 4,8] [--baseline] [--out DIR]

Without ``--costs`` it first sweeps the whole registry once for them. Then, for each shard count, it
runs every shard of the split one after another (as one machine of each would), with ``--costs``,
and prints each shard's wall time (its results file's ``wall_seconds``), the largest over the mean,
and the load average; ``--baseline`` also runs the split balanced by counting input configurations.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sweep(framework: str, output: Path, *extra: str) -> float:
    """Run one sweep; its results file's wall seconds."""
    command = [sys.executable, str(ROOT / "opperf.py"), "sweep", "--framework", framework, "--quiet"]
    subprocess.run([*command, *extra, "--output-file", str(output)], check=True, capture_output=True)
    return float(json.loads(output.read_text())["environment"]["wall_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--framework", default="mxnet")
    parser.add_argument("--costs")
    parser.add_argument("--shards", default="4,8")
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--out", default="shard-balance")
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(exist_ok=True)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    costs = Path(arguments.costs) if arguments.costs else out / "previous.json"
    if not arguments.costs:
        print(f"previous sweep (the costs): {sweep(arguments.framework, costs):.1f} s")
    splits = [("costs", ["--costs", str(costs)])] + ([("counts", [])] if arguments.baseline else [])
    for count in (int(text) for text in arguments.shards.split(",")):
        for name, extra in splits:
            walls = [
                sweep(
                    arguments.framework, out / f"{name}-{count}-{k}.json", "--shard", f"{k}/{count}", *extra
                )
                for k in range(1, count + 1)
            ]
            mean = statistics.fmean(walls)
            shown = " ".join(f"{wall:.1f}" for wall in walls)
            print(
                f"{count} shards by {name}: {shown} s; largest {max(walls) / mean:.3f}x the mean {mean:.1f} s"
            )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
