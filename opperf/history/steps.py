"""Step detection over a configuration's history: where its level moved and stayed.

A series is one row's medians over runs, in time order, on the log scale. A step at run i compares
the level just before it with the level just after: the medians of the ``WINDOW`` runs on each side
(fewer at the ends of a segment). With ``WINDOW`` = 2 · ``MIN_HOLD`` - 1, a new level must hold for
``MIN_HOLD`` runs to move the median after it: one slow run is noise, two at a new level are a step.
A step qualifies when it exceeds both the threshold and the series' own noise: ``NOISE_FACTOR``
robust standard deviations (MAD) of the runs around the series' running median, so a series that
wanders by 30% needs a larger step than one that holds within 1%. Binary segmentation takes the
qualifying step whose windows' means differ most, then looks again on each side of it. Pure
functions; the store feeds them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

MIN_HOLD = 2
"""Runs a level must hold on each side of a step."""

WINDOW = 2 * MIN_HOLD - 1
"""Runs on each side of a step whose median is the level there."""

NOISE_FACTOR = 4.0
"""A step must exceed this many robust standard deviations of the series' runs."""

MAD_TO_SD = 1.4826
"""A normal's standard deviation per median absolute deviation."""


@dataclass(frozen=True)
class Step:
    """A level change between runs ``index - 1`` and ``index``: ``ratio`` is the new level over the
    old (medians of the segments), ``noise`` the relative spread the step had to exceed."""

    index: int
    before: float
    after: float
    noise: float

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def regression(self) -> bool:
        return self.after > self.before


def robust_sd(values: Sequence[float]) -> float:
    """The MAD-based standard deviation of ``values`` (0 for fewer than two)."""
    if len(values) < 2:
        return 0.0
    centre = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - centre) for v in values)


def detect_steps(medians: Sequence[float], threshold: float) -> list[Step]:
    """The steps of a series of positive medians (run order), earliest first."""
    logs = [math.log(m) for m in medians]
    noise = NOISE_FACTOR * robust_sd(_around_running_median(logs))
    found: list[int] = []
    _split(logs, 0, len(logs), max(math.log1p(threshold), noise), found)
    cuts = sorted(found)
    bounds = [0, *cuts, len(logs)]
    return [
        Step(
            index=cut,
            before=math.exp(statistics.median(logs[bounds[position - 1] : cut])),
            after=math.exp(statistics.median(logs[cut : bounds[position + 1]])),
            noise=math.expm1(noise),
        )
        for position, cut in enumerate(cuts, start=1)
    ]


def _around_running_median(logs: Sequence[float]) -> list[float]:
    """Each run less the median of it and its neighbours: what is left once the level, steps
    included, is taken out."""
    return [v - statistics.median(logs[max(0, i - 1) : i + 2]) for i, v in enumerate(logs)]


def _split(logs: Sequence[float], start: int, end: int, minimum: float, found: list[int]) -> None:
    """Binary segmentation of ``logs[start:end]``: cut at the strongest qualifying step, recurse."""
    best: tuple[float, int] | None = None
    for cut in range(start + MIN_HOLD, end - MIN_HOLD + 1):
        before = logs[max(start, cut - WINDOW) : cut]
        after = logs[cut : min(end, cut + WINDOW)]
        if abs(statistics.median(after) - statistics.median(before)) <= minimum:
            continue
        # Medians qualify a step (one odd run cannot); means place it (the runs it moved).
        strength = abs(statistics.fmean(after) - statistics.fmean(before))
        if best is None or strength > best[0]:
            best = (strength, cut)
    if best is None:
        return
    found.append(best[1])
    _split(logs, start, best[1], minimum, found)
    _split(logs, best[1], end, minimum, found)
