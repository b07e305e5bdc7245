"""Running opperf sweeps in fresh processes and comparing two of them: shared by the benchmarks."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from opperf.utils.stats import quantile

ROOT = Path(__file__).resolve().parent.parent
SLOWDOWN_SITE = ROOT / "benchmarks" / "slowdown"
"""Where the test-only slowdown lives (its ``sitecustomize``), outside opperf."""


def slowed(operators: str, factor: float) -> dict[str, str]:
    """The environment of workers whose ``operators`` (comma-separated) have samples ``factor`` times
    larger: a known slowdown for a detection benchmark to find (``benchmarks/slowdown``)."""
    path = os.pathsep.join(filter(None, (str(SLOWDOWN_SITE), os.environ.get("PYTHONPATH"))))
    return {"PYTHONPATH": path, "OPPERF_TEST_SLOWDOWN": f"{operators}:{factor}"}


MOVE_THRESHOLD = 0.05
"""A configuration whose median moves more than this (|log ratio|) between runs should carry a flag."""


@dataclass(frozen=True)
class Sweep:
    """One finished sweep: its results document and wall-clock seconds (process start to exit)."""

    document: dict
    wall_s: float


def run_sweep(*arguments: str, root: Path = ROOT) -> Sweep:
    """``opperf.py`` (``root``'s: this checkout's, or another's) with ``arguments`` in a fresh Python
    process, its JSON results read back."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "results.json"
        command = [sys.executable, str(root / "opperf.py"), "--output-format", "json",
                   "--output-file", str(output), "--quiet", *arguments]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL, cwd=root)
        wall = time.perf_counter() - start
        return Sweep(json.loads(output.read_text()), wall)


def _key(result: dict) -> str:
    return json.dumps([result["op"], result["inputs"]], sort_keys=True)


@dataclass(frozen=True)
class Repeatability:
    """How far forward medians moved between two sweeps, over the configurations both measured."""

    configurations: int
    median_move: float
    p90_move: float
    moved: int
    moved_and_flagged: int

    def describe(self) -> str:
        return (
            f"{self.configurations} configurations: median |log ratio| {self.median_move:.2%}, "
            f"p90 {self.p90_move:.2%}; {self.moved} moved more than {MOVE_THRESHOLD:.0%}, "
            f"{self.moved_and_flagged} of them flagged noisy or imprecise in either run"
        )


def compare(first: dict, second: dict) -> Repeatability:
    """|log(median ratio)| per configuration measured ok in both documents."""
    earlier = {_key(r): r for r in first["results"] if r["status"] == "ok" and r["forward"]}
    moves, moved, flagged = [], 0, 0
    for result in second["results"]:
        before = earlier.get(_key(result))
        if before is None or result["status"] != "ok" or not result["forward"]:
            continue
        a, b = before["forward"]["median_s"], result["forward"]["median_s"]
        if a <= 0 or b <= 0:
            continue
        move = abs(math.log(b / a))
        moves.append(move)
        if move > MOVE_THRESHOLD:
            moved += 1
            doubts = {"noisy", "imprecise"} & set((before.get("flags") or []) + (result.get("flags") or []))
            flagged += bool(doubts)
    return Repeatability(
        configurations=len(moves),
        median_move=statistics.median(moves),
        p90_move=quantile(moves, 0.9),
        moved=moved,
        moved_and_flagged=flagged,
    )
