"""What a measurement's numbers mean: flags that say when not to trust them, and roofline context.

Derived at report time from a measurement and the sweep's calibrations (harness overhead, machine
peaks), so records in a journal stay raw facts and a report can be re-rendered from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opperf.results import Measurement, Status
from opperf.utils.load import BUSY_THRESHOLD
from opperf.utils.peaks import MachinePeaks
from opperf.work import achieved, count_work, fraction_of_peak

OVERHEAD_FACTOR = 5
"""A median within this factor of the harness's own per-call cost mostly measures the harness."""


@dataclass(frozen=True)
class Calibration:
    """A sweep's calibrations: the harness's per-call overhead, and the machine's peaks (CPU only)."""

    harness_overhead_s: float | None = None
    peaks: MachinePeaks | None = None

    @classmethod
    def from_environment(cls, environment: Mapping[str, object]) -> Calibration:
        peaks = environment.get("machine_peaks")
        return cls(
            harness_overhead_s=environment.get("harness_overhead_s"),
            peaks=MachinePeaks.from_json(peaks) if peaks else None,
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
    if overhead and measurement.forward_summary.median < OVERHEAD_FACTOR * overhead:
        found.append("overhead_dominated")
    if measurement.competing_load is not None and measurement.competing_load > BUSY_THRESHOLD:
        found.append("busy_machine")
    return found


def roofline(measurement: Measurement, calibration: Calibration) -> dict[str, object] | None:
    """Bytes, FLOPs and achieved rates of the forward median, and fractions of this machine's peaks
    (CPU measurements only: the peaks are the host's); None when the work cannot be counted."""
    if measurement.status is not Status.OK or not measurement.forward:
        return None
    work = count_work(measurement.spec)
    median = measurement.forward_summary.median
    if work is None or median <= 0:
        return None
    rates = achieved(work, median)
    block: dict[str, object] = {
        "bytes": work.bytes_moved,
        "flops": work.flops,
        "gb_per_s": rates.gb_per_s,
        "gflop_per_s": rates.gflop_per_s,
    }
    if calibration.peaks is not None and measurement.spec.options.device.startswith("cpu"):
        block["fraction_of_peak"] = fraction_of_peak(rates, calibration.peaks).describe()
    return block
