"""How well verdicts tell real changes from the machine's noise: A/A false calls, power, and cost.

    .venv/bin/python -m benchmarks.regression_detection [--categories C | --ops A,B] [--scenarios ...]

Each scenario runs real opperf jobs in fresh processes and diffs them with ``opperf diff``:

- ``aa-ab``: an A/B job of this interpreter against itself; target at most 1% of rows slower or faster.
- ``aa-diff``: two separate sweeps, diffed; target at most 2% slower; the share inconclusive reported.
- ``power-ab``: an A/B job whose new side has a 10% slowdown injected into the chosen operators
  (``OPPERF_TEST_SLOWDOWN`` through ``benchmarks/slowdown``, test-only); target: at least 90% of
  affected rows above 100 us slower.
- ``power-diff``: three sweeps per side, a 25% slowdown injected into the new side; same target.
- ``onednn``: an A/B job with ``MXNET_MKLDNN_ENABLED=0`` on the new side, ``--jobs`` times: target
  every oneDNN-backed row (Convolution, FullyConnected, Pooling, softmax) 1.5x slower or more in
  every round called ``slower``, no element-wise row called.

Each scenario prints the load average around it: the targets hold on a machine doing other work.

It also prints each job's wall time, and the A/B job's against one sweep's (target: at most 2.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks.sweeps import ROOT, slowed

SCENARIOS = ("aa-ab", "aa-diff", "power-ab", "power-diff", "onednn")
INJECTED = "exp,log,sqrt,broadcast_add,broadcast_mul,dot,FullyConnected,Convolution,Pooling,softmax"
"""Operators the power scenarios slow down (their rows above 100 us count towards power)."""
ONEDNN_OPS = "Convolution,FullyConnected,Pooling,softmax,exp,broadcast_add"
ONEDNN_BACKED = {"Convolution", "FullyConnected", "Pooling", "softmax"}
LARGE_S = 100e-6


def opperf(*arguments: str, environment: dict[str, str] | None = None) -> float:
    """Run ``opperf.py`` with ``arguments`` in a fresh process; its wall-clock seconds."""
    import os

    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), *arguments],
        check=True,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(environment or {})},
    )
    return time.perf_counter() - start


def diff_rows(*files: str) -> list[dict]:
    """``opperf diff`` of ``files`` (BASE NEW, or one A/B file), its JSON rows."""
    command = [
        sys.executable,
        str(ROOT / "opperf.py"),
        "diff",
        *files,
        "--output-format",
        "json",
        "--fail-on",
        "never",
    ]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)["rows"]


def rounds_run(file: str) -> str:
    """How many configurations of an A/B file got how many rounds (sequential rounds)."""
    schedule = json.loads(Path(file).read_text())["ab"].get("schedule") or {}
    found = schedule.get("rounds_run") or {}
    return "  rounds per configuration: " + ", ".join(f"{n} got {k}" for k, n in found.items())


def counts(rows: Sequence[dict]) -> Counter:
    return Counter(row["verdict"] for row in rows)


def describe(name: str, rows: Sequence[dict], seconds: float) -> str:
    found = counts(rows)
    shares = ", ".join(
        f"{verdict} {count} ({count / len(rows):.1%})" for verdict, count in found.most_common()
    )
    return f"{name}: {len(rows)} rows in {seconds:.0f} s: {shares}"


def power(rows: Sequence[dict], injected: set[str]) -> str:
    """Of the injected operators' rows above 100 us on both sides, how many were called slower."""
    affected = [
        r
        for r in rows
        if r["op"] in injected
        and r["base"]
        and r["new"]
        and min(_median(r, "base"), _median(r, "new")) > LARGE_S
    ]
    slower = sum(r["verdict"] == "slower" for r in affected)
    others = [r for r in rows if r["op"] not in injected]
    false = sum(r["verdict"] in ("slower", "faster") for r in others)
    share = f"{slower / len(affected):.0%}" if affected else "n/a"
    false_share = f"{false / len(others):.1%}" if others else "n/a"
    return (
        f"  affected rows above 100 us: {slower} of {len(affected)} slower ({share}); "
        f"other rows (an A/A in the same job) called changed: {false} of {len(others)} ({false_share})"
    )


def _median(row: dict, side: str) -> float:
    return row[side]["median_s"]


def every_round_ratios(file: str) -> dict[tuple[str, str, str], list[float]]:
    """Each row's ratio new over base in each round of an A/B file (the rounds' fastest passes), by
    (operator, canonical inputs, phase)."""
    rounds: dict[tuple[str, str, str], dict[int, dict[str, float]]] = {}
    for record in json.loads(Path(file).read_text())["results"]:
        for phase in ("forward", "backward"):
            if record.get(phase):
                key = (record["op"], json.dumps(record["inputs"], sort_keys=True), phase)
                rounds.setdefault(key, {}).setdefault(record["round"], {})[record["side"]] = min(
                    record[phase]["samples_s"]
                )
    return {
        key: [pair["new"] / pair["base"] for pair in found.values() if len(pair) == 2]
        for key, found in rounds.items()
    }


def onednn_calls(rows: Sequence[dict], ratios: dict[tuple[str, str, str], list[float]]) -> str:
    """The oneDNN target: of the oneDNN-backed rows 1.5x slower or more in every round, how many were
    called slower; how many element-wise rows were called, and how many are ``same``."""
    key = lambda r: (r["op"], json.dumps(r["inputs"], sort_keys=True), r["phase"])  # noqa: E731
    backed = [r for r in rows if r["op"] in ONEDNN_BACKED and min(ratios.get(key(r)) or [0]) >= 1.5]
    called = sum(r["verdict"] == "slower" for r in backed)
    others = [r for r in rows if r["op"] not in ONEDNN_BACKED]
    false = sum(r["verdict"] in ("slower", "faster") for r in others)
    same = sum(r["verdict"] == "same" for r in others)
    return (
        f"  oneDNN-backed rows 1.5x slower or more in every round: {called} of {len(backed)} slower; "
        f"element-wise rows: {false} of {len(others)} called, {same} same"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--categories", default="", help="the selection (default: the whole registry)")
    parser.add_argument("--ops", default="", help="the selection, by operator")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"of {', '.join(SCENARIOS)}")
    parser.add_argument("--rounds", default=None, help="the A/B jobs' --rounds (default: ab's own)")
    parser.add_argument("--keep", default=None, help="write the jobs' files into this folder and keep them")
    parser.add_argument("--affinity", default="auto", help="the jobs' --affinity (default: auto)")
    parser.add_argument("--jobs", type=int, default=3, help="oneDNN jobs to run (default: 3)")
    arguments = parser.parse_args()
    selection = [*(["--categories", arguments.categories] if arguments.categories else []),
                 *(["--ops", arguments.ops] if arguments.ops else []), "--threads", "1",
                 "--affinity", arguments.affinity]  # fmt: skip
    chosen = arguments.scenarios.split(",")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(arguments.keep or folder)
        path.mkdir(parents=True, exist_ok=True)

        def sweep(name: str, environment: dict[str, str] | None = None) -> tuple[str, float]:
            output = str(path / f"{name}.json")
            return output, opperf(*selection, "--quiet", "--output-file", output, environment=environment)

        def ab(name: str, *flags: str) -> tuple[str, float]:
            output = str(path / f"{name}.json")
            rounds = ["--rounds", arguments.rounds] if arguments.rounds else []
            return output, opperf("ab", *selection, *rounds, *flags, "--output-file", output)

        sweep_seconds = None
        if "aa-ab" in chosen:
            file, seconds = ab("aa_ab")
            rows = diff_rows(file)
            print(describe("A/A through ab", rows, seconds), rounds_run(file), sep="\n")
            single, sweep_seconds = sweep("single")
            print(f"  ab costs {seconds / sweep_seconds:.2f}x one sweep ({sweep_seconds:.0f} s)")
        if "aa-diff" in chosen:
            (first, a), (second, b) = sweep("a1"), sweep("a2")
            print(describe("A/A through diff of two sweeps", diff_rows(first, second), a + b))
        if "power-ab" in chosen:
            environment = slowed(INJECTED, 1.10).items()
            flags = [flag for name, value in environment for flag in ("--new-env", f"{name}={value}")]
            file, seconds = ab("power_ab", *flags)
            rows = diff_rows(file)
            print(describe("10% injected, ab", rows, seconds), rounds_run(file), sep="\n")
            print(power(rows, set(INJECTED.split(","))))
        if "power-diff" in chosen:
            bases = [sweep(f"b{k}") for k in range(3)]
            news = [sweep(f"n{k}", slowed(INJECTED, 1.25)) for k in range(3)]
            rows = diff_rows(",".join(f for f, _ in bases), ",".join(f for f, _ in news))
            print(describe("25% injected, diff of 3 sweeps per side", rows, sum(s for _, s in bases + news)))
            print(power(rows, set(INJECTED.split(","))))
        if "onednn" in chosen:
            for job in range(arguments.jobs):
                output = str(path / f"onednn{job}.json")
                onednn_off = ("--new-env", "MXNET_MKLDNN_ENABLED=0")
                before = os.getloadavg()[0]
                seconds = opperf(
                    "ab", "--ops", ONEDNN_OPS, *selection[-4:], *onednn_off, "--output-file", output
                )
                rows = diff_rows(output)
                print(
                    describe(
                        f"oneDNN off, ab (load average {before:.2f} -> {os.getloadavg()[0]:.2f})",
                        rows,
                        seconds,
                    )
                )
                print(onednn_calls(rows, every_round_ratios(output)))


if __name__ == "__main__":
    main()
