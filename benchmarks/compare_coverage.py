"""How many functions ``opperf compare`` measures in every namespace it is given.

    .venv/bin/python -m benchmarks.compare_coverage [--namespaces mx.np,jnp,torch] [--memory-limit 6GiB]

Runs ``opperf compare NAMESPACES --ops common`` (every function of the first namespace that each other
has a counterpart of) in a fresh process, each namespace in its own worker, with few passes a round
(coverage, not verdicts, is what this counts), and prints how many functions got at least one input
configuration measured in every namespace; target for ``mx.np,jnp,torch``: at least 150. For each
function that did not, it prints each namespace's reason. It prints the wall time and the load
average around the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.sweeps import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--namespaces", default="mx.np,jnp,torch")
    parser.add_argument("--memory-limit", default="6GiB", help="OPPERF_MEMORY_LIMIT for each worker")
    parser.add_argument("--timeout", default="60", help="seconds a round of one configuration may take")
    parser.add_argument("--keep", default=None, help="also copy the comparison's JSON document here")
    arguments = parser.parse_args()
    namespaces = arguments.namespaces.split(",")
    before, started = os.getloadavg()[0], time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        output = Path(arguments.keep or Path(folder) / "compare.json")
        command = [
            sys.executable, str(ROOT / "opperf.py"), "compare", arguments.namespaces, "--ops", "common",
            "--rounds", "2", "--warmup", "1", "--runs", "5", "--timeout", arguments.timeout,
            "--quiet", "--output-file", str(output),
        ]  # fmt: skip
        environment = {**os.environ, "OPPERF_MEMORY_LIMIT": arguments.memory_limit}
        finished = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
        if finished.returncode != 0:
            sys.exit(f"opperf compare exited with {finished.returncode}: {finished.stderr[-2000:]}")
        document = json.loads(output.read_text())
    records = document["results"]
    measured: dict[str, set[str]] = defaultdict(set)  # function -> namespaces with an ok record
    why: dict[str, dict[str, str]] = defaultdict(dict)
    for row in document["comparison"]["rows"]:
        for namespace in namespaces:
            index = row["records"].get(namespace)
            record = records[index] if index is not None else None
            if record is not None and record["status"] == "ok":
                measured[row["operator"]].add(namespace)
            elif namespace not in measured[row["operator"]]:
                problem = row["problems"].get(namespace)
                why[row["operator"]][namespace] = problem or f"{record['status']}: {record.get('reason', '')}"
    functions = sorted({row["operator"] for row in document["comparison"]["rows"]})
    everywhere = [name for name in functions if measured[name] >= set(namespaces)]
    for name in functions:
        if name not in everywhere:
            missing = {ns: why[name].get(ns, "?") for ns in namespaces if ns not in measured[name]}
            print(f"{name}: " + "; ".join(f"{ns}: {reason[:160]}" for ns, reason in missing.items()))
    print(
        f"functions measured in every namespace ({arguments.namespaces}): {len(everywhere)} of "
        f"{len(functions)} compared; {time.monotonic() - started:.0f} s; "
        f"load average {before:.2f} -> {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
