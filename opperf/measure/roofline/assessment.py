"""What a measurement's numbers mean: flags that say when not to trust them, and roofline context.

Derived from a measurement and the sweep's calibrations (harness overhead, machine peaks) before
its record is written (``assess``), so records in a journal stay raw facts and a report can be
re-rendered from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from opperf.measure.roofline.peaks import MachinePeaks
from opperf.measure.roofline.work import PeakFractions, Rates, Work, achieved, count_work, fraction_of_peak
from opperf.results.document import Assessment
from opperf.results.measurement import Measurement, Status
from opperf.utils.load import BUSY_THRESHOLD
from opperf.utils.stats import Summary

OVERHEAD_FACTOR = 5
"""A median within this factor of the harness's own per-call cost mostly measures the harness."""


@dataclass(frozen=True)
class Calibration:
    """A sweep's calibrations: the harness's per-call overhead, and the machine's peaks (CPU only)."""

    harness_overhead_s: float | None = None
    peaks: MachinePeaks | None = None
    usable_cpus: int | None = None

    @classmethod
    def from_environment(cls, environment: Mapping[str, Any]) -> Calibration:
        peaks = environment.get("machine_peaks")
        return cls(
            harness_overhead_s=environment.get("harness_overhead_s"),
            peaks=MachinePeaks.from_json(peaks) if peaks else None,
            usable_cpus=environment.get("usable_cpus"),
        )


def flags(measurement: Measurement, calibration: Calibration) -> list[str]:
    """Why a measurement's figures deserve doubt, as short names; empty when there is none."""
    if measurement.status is not Status.OK or not measurement.forward:
        return []
    found = []
    summaries = [s for s in (measurement.forward_summary, measurement.backward_summary) if s]
    if any(s.noisy for s in summaries):
        found.append("noisy")
    if measurement.met_target is False:
        found.append("imprecise")
    overhead = calibration.harness_overhead_s
    if overhead and cast(Summary, measurement.forward_summary).median < OVERHEAD_FACTOR * overhead:
        found.append("overhead_dominated")
    if measurement.competing_load is not None and measurement.competing_load > BUSY_THRESHOLD:
        found.append("busy_machine")
    if measurement.load_dominated:
        found.append("load_dominated")
    threads = measurement.spec.options.threads
    if calibration.usable_cpus and isinstance(threads, int) and threads > calibration.usable_cpus:
        found.append("oversubscribed")
    if measurement.gpu_state is not None and measurement.gpu_state.low_clock:
        found.append("low_clock")
    return found


@dataclass(frozen=True)
class Roofline:
    """A measurement's roofline context: the work its operator does, the rates its forward median
    achieves, and the fractions of this machine's peaks (None off the CPU, whose peaks they are)."""

    work: Work
    rates: Rates
    fractions: PeakFractions | None

    def to_json(self) -> dict[str, object]:
        block: dict[str, Any] = {
            "bytes": self.work.bytes_moved,
            "flops": self.work.flops,
            "gb_per_s": self.rates.gb_per_s,
            "gflop_per_s": self.rates.gflop_per_s,
        }
        if self.fractions is not None:
            block["fraction_of_peak"] = self.fractions.describe()
        return block


def roofline(measurement: Measurement, calibration: Calibration) -> Roofline | None:
    """The roofline context of the forward median; None when the work cannot be counted."""
    if measurement.status is not Status.OK or not measurement.forward:
        return None
    work = count_work(measurement.spec) or measurement.counted_work
    median = cast(Summary, measurement.forward_summary).median
    if work is None or median <= 0:
        return None
    rates = achieved(work, median)
    on_cpu = not measurement.spec.options.device.on_gpu
    fractions = (
        fraction_of_peak(rates, calibration.peaks) if calibration.peaks is not None and on_cpu else None
    )
    return Roofline(work, rates, fractions)


def assess(measurement: Measurement, calibration: Calibration) -> Assessment:
    """``measurement``'s flags and roofline context as its record holds them."""
    found = roofline(measurement, calibration)
    return Assessment(tuple(flags(measurement, calibration)), found.to_json() if found else None)
