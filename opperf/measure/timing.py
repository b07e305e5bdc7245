"""Timing strategies: how one measured call becomes one sample in seconds.

A strategy times ``call`` (which runs the operator and returns its outputs) and returns the outputs,
the elapsed seconds, and the framework operator names that made up the time (empty when unknown).
Backends provide the synchronisation and, for native profilers, the strategy itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from opperf.results.measurement import TimerKind


@dataclass(frozen=True)
class Timed:
    """One timed call: its outputs, elapsed seconds, and the operators the time covers."""

    outputs: object
    seconds: float
    operators: tuple[str, ...] = ()


class Timer(Protocol):
    """A timing strategy. ``name`` is what reports show (``native`` or ``python``), ``kind`` what its
    samples are (``opperf.results.measurement.TimerKind``)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> TimerKind: ...

    def time(self, call: Callable[[], object]) -> Timed: ...


@dataclass(frozen=True)
class PythonTimer:
    """Wall-clock time of one call plus the device synchronisation that makes its work complete.

    ``clock`` returns nanoseconds; it is a parameter so tests can inject a deterministic one.
    """

    synchronize: Callable[[], None]
    clock: Callable[[], int] = time.perf_counter_ns
    name: str = "python"
    kind: TimerKind = "host"

    def time(self, call: Callable[[], object]) -> Timed:
        self.synchronize()
        start = self.clock()
        outputs = call()
        self.synchronize()
        elapsed = self.clock() - start
        return Timed(outputs=outputs, seconds=elapsed * 1e-9)
