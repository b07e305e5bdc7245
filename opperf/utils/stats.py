"""Statistics of timing samples: pure functions of the sample tuple, in seconds."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """Summary statistics of one sample set, all in the samples' unit (seconds)."""

    n: int
    mean: float
    median: float
    min: float
    max: float
    stdev: float
    iqr: float


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) by linear interpolation between closest ranks."""
    if not samples:
        raise ValueError("quantile of an empty sample set")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile q must lie in [0, 1], got {q}")
    ordered = sorted(samples)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(samples: Sequence[float]) -> Summary:
    """Summarise a non-empty sample set; the standard deviation of one sample is 0."""
    if not samples:
        raise ValueError("cannot summarise an empty sample set")
    return Summary(
        n=len(samples),
        mean=statistics.fmean(samples),
        median=statistics.median(samples),
        min=min(samples),
        max=max(samples),
        stdev=statistics.stdev(samples) if len(samples) > 1 else 0.0,
        iqr=quantile(samples, 0.75) - quantile(samples, 0.25),
    )
