"""Does ``opperf compare`` say the same thing twice? Each row's verdict over repeated runs.

    .venv/bin/python -m benchmarks.compare_repeatability [--namespaces mx.nd,mx.np] [--runs 5] [--rounds N]
        [--keep DIR]

Runs ``opperf compare`` ``--runs`` times in fresh processes and prints, per row (operator, inputs,
namespace, phase), the verdicts it got; target: each row's most common verdict in at least 4 of 5
runs. A point ratio of one run moved 40% run to run (mx.np over mx.nd ``add``: 1.11, 0.71, 1.02,
1.15, 0.89). It prints the load average around the runs: the target holds on a machine doing other
work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.sweeps import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--namespaces", default="mx.nd,mx.np")
    parser.add_argument("--ops", default="add,exp,sum,dot,softmax")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=None, help="compare's --rounds (default: its own)")
    parser.add_argument("--keep", type=Path, help="a folder to keep each run's comparison file in")
    arguments = parser.parse_args()
    verdicts: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    before, started = os.getloadavg()[0], time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        folder = arguments.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for run in range(arguments.runs):
            output = folder / f"compare{run}.json"
            command = ["compare", arguments.namespaces, "--ops", arguments.ops, "--threads", "1"]
            command += ["--rounds", str(arguments.rounds)] if arguments.rounds else []
            subprocess.run(
                [sys.executable, str(ROOT / "opperf.py"), *command, "--output-file", str(output)],
                check=True,
                capture_output=True,
            )
            for row in json.loads(output.read_text())["comparison"]["rows"]:
                for namespace, phases in row["versus"].items():
                    for phase, found in phases.items():
                        if found is not None:
                            key = (row["operator"], row["inputs"], namespace, phase)
                            verdicts[key].append(f"{found['verdict']} {found['ratio']:.2f}")
    steady = 0
    for key, found in sorted(verdicts.items()):
        top, count = Counter(v.split()[0] for v in found).most_common(1)[0]
        steady += count >= len(found) - 1
        print(f"{' '.join(key)}: {top} in {count} of {len(found)} ({', '.join(found)})")
    print(
        f"rows whose verdict held in all runs but at most one: {steady} of {len(verdicts)}; "
        f"load average {before:.2f} -> {os.getloadavg()[0]:.2f}; {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
