"""Statistics of timing samples: pure functions of the sample tuple, in seconds.

Medians, never means, are the headline: within one process, outliers of an operator reach many
times its median. How far to trust a median is said two ways: the spread of the samples (IQR over
median, the noise flag) and the precision of the median itself (a distribution-free confidence
interval, which adaptive stopping drives below a target).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

NOISE_THRESHOLD = 0.10
"""IQR over median above which a sample set is flagged noisy (torch.utils.benchmark warns likewise)."""

CONFIDENCE_Z = 1.96
"""Standard normal quantile of the median's two-sided 95% confidence interval."""


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
    p90: float
    p99: float
    median_low: float
    median_high: float

    @property
    def relative_iqr(self) -> float:
        """IQR over median: the samples' spread relative to the figure reported."""
        return self.iqr / self.median if self.median > 0 else math.inf

    @property
    def noisy(self) -> bool:
        return self.relative_iqr > NOISE_THRESHOLD

    @property
    def relative_precision(self) -> float:
        """Half the median's 95% confidence interval, over the median."""
        return median_precision(self.median_low, self.median_high, self.median)


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; infinite over a zero denominator, zero where both are zero (an
    arithmetic intensity of work that moves no bytes, of no work at all)."""
    if denominator:
        return numerator / denominator
    return math.inf if numerator else 0.0


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


def median_interval(samples: Sequence[float]) -> tuple[float, float]:
    """A distribution-free 95% confidence interval of the median: the order statistics of ranks
    (n - z√n)/2 and 1 + (n + z√n)/2 (normal approximation to the binomial; Conover, 1999).

    Timing samples are skewed and heavy-tailed, so no normal model of the samples themselves is
    assumed. With few samples the interval is the whole range.
    """
    if not samples:
        raise ValueError("median interval of an empty sample set")
    ordered = sorted(samples)
    n = len(ordered)
    spread = CONFIDENCE_Z * math.sqrt(n)
    low_rank = max(1, math.floor((n - spread) / 2))
    high_rank = min(n, math.ceil(1 + (n + spread) / 2))
    return ordered[low_rank - 1], ordered[high_rank - 1]


def median_precision(low: float, high: float, median: float) -> float:
    """Half an interval's width over the median; infinite for a zero median."""
    return (high - low) / (2 * median) if median > 0 else math.inf


def relative_precision(samples: Sequence[float]) -> float:
    """The median's relative precision: half its 95% confidence interval over the median."""
    low, high = median_interval(samples)
    return median_precision(low, high, statistics.median(samples))


def summarize(samples: Sequence[float]) -> Summary:
    """Summarise a non-empty sample set; the standard deviation of one sample is 0."""
    if not samples:
        raise ValueError("cannot summarise an empty sample set")
    low, high = median_interval(samples)
    return Summary(
        n=len(samples),
        mean=statistics.fmean(samples),
        median=statistics.median(samples),
        min=min(samples),
        max=max(samples),
        stdev=_stdev(samples),
        iqr=quantile(samples, 0.75) - quantile(samples, 0.25),
        p90=quantile(samples, 0.90),
        p99=quantile(samples, 0.99),
        median_low=low,
        median_high=high,
    )


MAD_TO_SD = 1.4826
"""A normal's standard deviation per median absolute deviation."""


def robust_sd(values: Sequence[float]) -> float:
    """The standard deviation of ``values`` from their median absolute deviation (0 for fewer than
    two): what one wild value cannot move."""
    if len(values) < 2:
        return 0.0
    centre = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(value - centre) for value in values)


def _stdev(samples: Sequence[float]) -> float:
    """The sample standard deviation in floating point (0 for one sample): ``statistics.stdev``
    computes it exactly in fractions, which made converting records a third of ``opperf diff``'s
    time over a full A/B file, and an A/B job's parent converts each record as it arrives."""
    if len(samples) < 2:
        return 0.0
    mean = math.fsum(samples) / len(samples)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in samples) / (len(samples) - 1))
