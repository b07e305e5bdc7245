"""How much of the machine other processes used while we measured.

A measurement taken while another process competes for the cores is not the operator's speed, and
on a small machine the difference is large (PyTorch with as many threads as cores runs a (1024, 1024)
add about 100x slower when another process holds a core). Linux's /proc/stat gives the machine's busy
time; subtracting this process's own CPU time leaves what others used.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

BUSY_THRESHOLD = 0.25
"""Cores' worth of other processes' CPU use above which a measurement is flagged as on a busy machine."""

_PROC_STAT = Path("/proc/stat")
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user, nice, system, irq, softirq, steal (not idle, iowait)


@dataclass(frozen=True)
class CpuSnapshot:
    """Cumulative CPU seconds: the whole machine's busy time and this process's own, at one instant."""

    wall_s: float
    machine_busy_s: float | None
    own_s: float


def snapshot() -> CpuSnapshot:
    times = os.times()
    return CpuSnapshot(
        wall_s=time.monotonic(),
        machine_busy_s=_machine_busy_seconds(),
        own_s=times.user + times.system,
    )


def competing_load(before: CpuSnapshot, after: CpuSnapshot) -> float | None:
    """Cores' worth of CPU that other processes used between two snapshots; None where unknown."""
    wall = after.wall_s - before.wall_s
    if before.machine_busy_s is None or after.machine_busy_s is None or wall <= 0:
        return None
    others = (after.machine_busy_s - before.machine_busy_s) - (after.own_s - before.own_s)
    return max(0.0, (others - _tick_resolution()) / wall)


def _tick_resolution() -> float:
    """Seconds of other processes' CPU time a window can read that did not happen: the machine's
    counter advances in whole clock ticks per CPU and this process's own in whole ticks too, so a
    window of a few ticks (a 15 ms measurement, at 100 ticks a second) reads one or two ticks of
    "others" on an idle machine, a third of a core or more. Only what exceeds them counts."""
    return ((os.cpu_count() or 1) + 1) / os.sysconf("SC_CLK_TCK")


def _machine_busy_seconds() -> float | None:
    try:
        fields = _PROC_STAT.read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = sum(int(fields[i]) for i in _BUSY_FIELDS if i < len(fields))
    return ticks / os.sysconf("SC_CLK_TCK")
