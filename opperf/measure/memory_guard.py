"""Stopping a benchmark worker that outgrows its memory before the kernel's OOM killer acts.

The fit check refuses what it can see coming, but an operator may still allocate more than its shapes
say (workspaces, values that decide the output's size). The sweep, which waits for the worker's reply
anyway, reads the worker's resident memory and what the host and its memory cgroups have left, more
often the closer they come to a limit; a worker past its allowance (``OPPERF_MEMORY_LIMIT``), or one
that leaves less than ``RESERVE_BYTES`` available, is killed by the sweep, which records why and the
worker's peak. The kernel would instead kill whichever process it chose, the sweep included.
The parent polls rather than limiting the worker's address space (``RLIMIT_AS``): OpenMP, MKL-DNN and
PyTorch reserve far more virtual memory than they touch, and a refused allocation inside a C++
kernel aborts the process without saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from opperf.measure.memory import (
    RESERVE_BYTES,
    describe_bytes,
    memory_limit_bytes,
    peak_rss_bytes,
    resident_bytes,
    system_available_bytes,
)

# How fast a worker is assumed to grow at most (first-touching pages on one core): the guard looks
# again before a worker growing this fast could cross the line it is nearest to.
FASTEST_GROWTH_BYTES_S = 4 * 2**30
SHORTEST_INTERVAL_S = 0.002
LONGEST_INTERVAL_S = 0.25


@dataclass(frozen=True)
class OutOfMemory:
    """Why the guard stopped a worker, and the most it held resident."""

    reason: str
    peak_bytes: int | None


@dataclass(frozen=True)
class Reading:
    """One look at a worker: ``stop`` when it must be stopped, else how long until the next look."""

    stop: OutOfMemory | None
    next_look_s: float


@dataclass(frozen=True)
class MemoryGuard:
    """The lines a worker must stay within: ``limit_bytes`` resident (None: no allowance set) and
    ``reserve_bytes`` left available on the host and in its memory cgroups."""

    limit_bytes: int | None
    reserve_bytes: int = RESERVE_BYTES

    @classmethod
    def from_environment(cls) -> MemoryGuard:
        return cls(limit_bytes=memory_limit_bytes())

    def look(self, pid: int) -> Reading:
        """Read the worker ``pid`` and the host: stop it, or say when to look again."""
        resident = resident_bytes(pid)
        if resident is None:  # gone: its exit is read elsewhere
            return Reading(None, LONGEST_INTERVAL_S)
        margins = []
        if self.limit_bytes is not None:
            if resident > self.limit_bytes:
                return Reading(
                    self._stop(
                        pid, f"above the {describe_bytes(self.limit_bytes)} " "OPPERF_MEMORY_LIMIT allows"
                    ),
                    0.0,
                )
            margins.append(self.limit_bytes - resident)
        available = system_available_bytes()
        if available is not None:
            if available < self.reserve_bytes:
                reason = (
                    f"leaving {describe_bytes(available)} available to the host and its memory cgroups, "
                    f"below the {describe_bytes(self.reserve_bytes)} reserve"
                )
                return Reading(self._stop(pid, reason), 0.0)
            margins.append(available - self.reserve_bytes)
        if not margins:
            return Reading(None, LONGEST_INTERVAL_S)
        interval = min(margins) / FASTEST_GROWTH_BYTES_S
        return Reading(None, min(LONGEST_INTERVAL_S, max(SHORTEST_INTERVAL_S, interval)))

    @staticmethod
    def _stop(pid: int, why: str) -> OutOfMemory:
        peak = peak_rss_bytes(pid)
        held = describe_bytes(peak) if peak is not None else "an unknown amount"
        return OutOfMemory(
            f"out of memory: the worker grew to {held} resident, {why}; opperf stopped it before the "
            "kernel's OOM killer would act",
            peak,
        )
