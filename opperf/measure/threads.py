"""Threads as a sweep factor: each thread count measured by its own pinned workers, interleaved.

``--threads 1,2`` (or ``auto``) measures every configuration once per count. A count's workers start
with that many intra-op threads (a framework fixes its thread pools when it starts, MXNet's OpenMP count
for good) and are pinned to as many CPUs where that leaves a CPU free (``utils.affinity``); counts
above the usable CPUs run unpinned and their records are flagged ``oversubscribed``. The counts take
turns per operator, in alternating order (1, 2 then 2, 1), so a drift in the machine's speed during a
sweep falls on every count alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, Measurement
from opperf.results.options import RunOptions, thread_counts
from opperf.utils.affinity import worker_cpus
from opperf.utils.devices import Device


@dataclass(frozen=True)
class ThreadPlan:
    """The thread counts of a sweep and the CPUs each count's workers are pinned to (None: unpinned)."""

    counts: tuple[int, ...]
    cpus: Mapping[int, tuple[int, ...] | None]

    @classmethod
    def of(cls, setting: Any, affinity: str, available: Sequence[int]) -> ThreadPlan:
        counts = tuple(c for c in thread_counts(setting, len(available)) if c is not None)
        return cls(counts, {count: worker_cpus(affinity, count, available) for count in counts})

    def variants(self, options: RunOptions, turn: int) -> list[RunOptions]:
        """``options`` once per count, in ascending order on even turns and descending on odd ones."""
        order = self.counts if turn % 2 == 0 else tuple(reversed(self.counts))
        return [replace(options, threads=count) for count in order]

    def describe(self) -> dict[str, list[int] | None]:
        """Each count's worker CPUs, for the environment of a results file."""
        return {str(count): list(cpus) if cpus else None for count, cpus in self.cpus.items()}


class ThreadFactorRunner:
    """Measures each spec in the workers of its thread count (``spec.options.threads``), one reusable
    worker per count; consecutive specs of one count share that count's time limit."""

    def __init__(self, framework: str, timeout_s: float, plan: ThreadPlan) -> None:
        self._runners = {
            count: IsolatedRunner(framework, timeout_s, count, plan.cpus[count]) for count in plan.counts
        }

    def __enter__(self) -> ThreadFactorRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for runner in self._runners.values():
            runner.close()

    def run(self, specs: Sequence[BenchmarkSpec]) -> Iterator[Measurement]:
        for count, group in itertools.groupby(specs, key=lambda spec: spec.options.threads):
            yield from self._runners[count].run(list(group))

    def harness_overhead(self, profiler: str, device: Device) -> float | None:
        """The harness's cost per call in the workers of the fewest threads."""
        return self._runners[min(self._runners)].harness_overhead(profiler, device)

    @property
    def peak_rss_bytes(self) -> int | None:
        peaks = [r.peak_rss_bytes for r in self._runners.values() if r.peak_rss_bytes is not None]
        return max(peaks) if peaks else None
