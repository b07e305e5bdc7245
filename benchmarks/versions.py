"""Does ``opperf ab`` call a change between two builds of the framework that a plain loop sees?

    .venv/bin/python -m benchmarks.versions --base-python ../venv-1.8/bin/python [--ops LayerNorm]

Runs ``opperf ab --base-python`` (the other build's workers) against this interpreter's build,
diffs it, and times each operator's first configuration in both interpreters with a plain loop
(``mx.nd.waitall`` after each call, the fastest of repeats): target, every row the loop sees change
by 1.5x or more is called that way. MXNet 1.8.0 against 1.9.1: LayerNorm (a plain loop measures its
forward 7.7x faster in 1.9.1). It prints the load average around the job: the target holds on a
machine doing other work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.regression_detection import diff_rows, opperf

LOOP = """
import json, sys, time
import mxnet as mx
shape = tuple(json.loads(sys.argv[1]))
data = mx.nd.random.uniform(shape=shape)
gamma, beta = mx.nd.ones(shape[-1]), mx.nd.zeros(shape[-1])
mx.nd.waitall()
best = float("inf")
for _ in range(7):
    start = time.perf_counter()
    for _ in range(20):
        mx.nd.LayerNorm(data, gamma, beta)
    mx.nd.waitall()
    best = min(best, (time.perf_counter() - start) / 20)
print(best)
"""
"""A plain loop over LayerNorm's forward in one interpreter: the fastest mean of 20 calls of 7."""


def plain_loop(python: str, shape: list[int]) -> float:
    found = subprocess.run(
        [python, "-c", LOOP, json.dumps(shape)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    return float(found.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--base-python", required=True, help="the other build's interpreter (numpy and mxnet)"
    )
    parser.add_argument("--ops", default="LayerNorm")
    arguments = parser.parse_args()
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        output = str(Path(folder) / "ab.json")
        seconds = opperf(
            "ab", "--base-python", arguments.base_python, "--ops", arguments.ops, "--threads", "1",
            "--output-file", output,
        )  # fmt: skip
        rows = diff_rows(output)
    after = os.getloadavg()[0]
    print(f"ab {arguments.ops} in {seconds:.0f} s (load average {before:.2f} -> {after:.2f})")
    for row in rows:
        print(
            f"  {row['op']} {json.dumps(row['inputs'])} {row['phase']}: {row['verdict']}, ratio "
            f"{row['ratio']:.3g} (95% interval {row['ratio_ci95'][0]:.3g}-{row['ratio_ci95'][1]:.3g})"
        )
    if "LayerNorm" in arguments.ops.split(","):
        shape = [32, 32, 256]
        base, new = plain_loop(arguments.base_python, shape), plain_loop(sys.executable, shape)
        print(f"  plain loop, LayerNorm {shape} forward: base {base * 1e3:.3f} ms, new {new * 1e3:.3f} ms, "
              f"ratio {new / base:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
