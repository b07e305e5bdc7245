"""Does ``opperf history detect`` find steps that happened, and only those?

    .venv/bin/python -m benchmarks.history_steps [--categories unary,reduction] [--runs 6]

Two scenarios of real sweeps added to a fresh store, each run in a fresh process:

- identical: ``--runs`` sweeps of the same code; target 0 steps;
- injected: ``--runs`` + 2 sweeps, a 1.3x slowdown injected (``benchmarks/slowdown``, test-only)
  into five operators from the fourth sweep on; target: a step in every one of their series
  that holds above the timer's resolution, and none elsewhere.

It prints the load average around each scenario: the targets hold on a machine doing other work.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.sweeps import ROOT, slowed

INJECTED = ("exp", "log", "sqrt", "sum", "mean")
"""The five operators the injected scenario slows down from the fourth sweep on."""


def opperf(*arguments: str, environment: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), *arguments],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **(environment or {})},
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"opperf {' '.join(arguments)} failed: {done.stderr.strip()}")
    return done.stdout


def scenario(folder: Path, name: str, runs: int, selection: list[str], inject_from: int | None) -> None:
    store = str(folder / f"{name}.sqlite")
    before = os.getloadavg()[0]
    for index in range(runs):
        slowdown = {}
        if inject_from is not None and index >= inject_from:
            slowdown = slowed(",".join(INJECTED), 1.3)
        output = str(folder / f"{name}{index}.json")
        opperf(*selection, "--quiet", "--output-file", output, environment=slowdown)
        opperf("history", "add", output, "--db", store)
    table = opperf("history", "detect", "--db", store)
    lines = [line for line in table.splitlines()[2:] if line.strip()]
    found = {line.split("(")[0].split(".")[-1] for line in lines}
    print(f"{name}: {runs} sweeps, load average {before:.2f} -> {os.getloadavg()[0]:.2f}: {len(lines)} steps")
    for line in lines:
        print(f"  {line}")
    if inject_from is not None:
        missing = [op for op in INJECTED if op not in found]
        others = sorted(found - set(INJECTED))
        print(
            f"  injected operators with a step: {len(INJECTED) - len(missing)} of {len(INJECTED)}"
            f" (missing: {', '.join(missing) or 'none'}); others with a step: {', '.join(others) or 'none'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--categories", default="unary,reduction", help="the sweeps' selection")
    parser.add_argument(
        "--runs", type=int, default=6, help="identical sweeps (the injected scenario: 2 more)"
    )
    parser.add_argument("--keep", default=None, help="keep the sweeps and stores in this folder")
    arguments = parser.parse_args()
    selection = ["--categories", arguments.categories, "--threads", "1", "--no-backward"]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(arguments.keep or temporary)
        folder.mkdir(parents=True, exist_ok=True)
        scenario(folder, "identical", arguments.runs, selection, None)
        scenario(folder, "injected", arguments.runs + 2, selection, 3)


if __name__ == "__main__":
    main()
