"""Step detection over a configuration's history: where its level moved and stayed.

A series is one row's medians over runs, in time order, on the log scale. Before any step is looked
for, each run's machine factor is taken out (``run_factors``: the median, over every operator the
run measured, of how far the run sits from its series' typical levels): a sweep on a slow stretch
of the machine moves every configuration, which is the machine's doing, not the operators' (six
sweeps of identical code had 16 steps in 24 series without it); a run that measured fewer than
``MIN_FACTOR_OPERATORS`` operators has none, its times judged as measured. A change most
configurations share moves the factor as the machine does, and is taken out with it: a build 1.5x
slower in 8 of 12 configurations is no step of theirs; ``shared_steps`` names such moves of the
factor itself apart, and a step that the series' own medians do not show beyond the threshold (the 4
unchanged configurations, moved against the factor) is none. A step at run i compares
the level just before it with the level just after: the medians of the ``WINDOW`` runs on each side
(fewer at the ends of a segment), the ``MIN_HOLD`` runs next to it on one side all beyond those on
the other (``_apart``).
With ``WINDOW`` = 2 · ``MIN_HOLD`` - 1, a new level must hold for ``MIN_HOLD`` runs to move the median
after it: one or two odd runs are noise, three at a new level are a step (six sweeps of identical
code had steps of 0.68x and 0.86x from a run at twice the time, or two at the end 15% faster).
A step qualifies when it exceeds both the threshold and the series' own noise: ``NOISE_FACTOR``
robust standard deviations (MAD) of the runs around the series' running median, so a series that
wanders by 30% needs a larger step than one that holds within 1%, and than ``decide.TICK_FLOOR`` ticks of
a quantising timer (9 us against 8 us is one tick of MXNet's profiler, not an 11% step). Binary
segmentation takes the qualifying step whose windows' means differ most, then looks again on each
side of it. Each step found gets a p-value (its segments' means against the series' own noise,
``step_p``), and Benjamini-Hochberg over every step of every series keeps those that hold at the
FDR level (``judge``): a store of hundreds of series would otherwise show a few steps by chance.
Pure functions; the store feeds them.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from opperf.utils.stats import robust_sd
from opperf.verdicts.decide import DEFAULT_ALPHA, tick_floor
from opperf.verdicts.distributions import t_sf
from opperf.verdicts.inference import bh_qvalues

if TYPE_CHECKING:
    from opperf.verdicts.history.store import Series

MIN_HOLD = 3
"""Runs a level must hold on each side of a step."""

WINDOW = 2 * MIN_HOLD - 1
"""Runs on each side of a step whose median is the level there."""

NOISE_FACTOR = 4.0
"""A step must exceed this many robust standard deviations of the series' runs."""


@dataclass(frozen=True)
class Step:
    """A level change between runs ``index - 1`` and ``index``: ``ratio`` is the new level over the
    old (medians of the segments), ``noise`` the relative spread the step had to exceed."""

    index: int
    before: float
    after: float
    noise: float
    p: float = 0.0
    q: float | None = None

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def regression(self) -> bool:
        return self.after > self.before


def detect_steps(medians: Sequence[float], threshold: float, floor: float = 0.0) -> list[Step]:
    """The steps of a series of positive medians (run order), earliest first, each with its p-value
    (``step_p``); a step must exceed ``floor`` too (log units: a timer's ticks, ``decide.tick_floor``)."""
    logs = [math.log(m) for m in medians]
    sd = robust_sd(_around_running_median(logs))
    noise = NOISE_FACTOR * sd
    found: list[int] = []
    _split(logs, 0, len(logs), max(math.log1p(threshold), noise, floor), found)
    cuts = sorted(found)
    bounds = [0, *cuts, len(logs)]
    return [
        Step(
            index=cut,
            before=math.exp(statistics.median(logs[bounds[position - 1] : cut])),
            after=math.exp(statistics.median(logs[cut : bounds[position + 1]])),
            noise=math.expm1(noise),
            p=step_p(logs[bounds[position - 1] : cut], logs[cut : bounds[position + 1]], sd),
        )
        for position, cut in enumerate(cuts, start=1)
    ]


def step_p(before: Sequence[float], after: Sequence[float], sd: float) -> float:
    """The two-sided p-value of a step between two segments of a series' log medians: the difference
    of their means against the series' own robust noise ``sd``, a t with as many degrees of freedom
    as the segments leave (0 when the series does not vary at all and the segments differ)."""
    difference = statistics.fmean(after) - statistics.fmean(before)
    if sd == 0:
        return 0.0 if difference else 1.0
    statistic = difference / (sd * math.sqrt(1 / len(before) + 1 / len(after)))
    return min(1.0, 2 * t_sf(abs(statistic), max(1, len(before) + len(after) - 2)))


MIN_FACTOR_OPERATORS = 5
"""Operators a run must have measured for a machine factor of it: the median of fewer is one or two
operators' own change. A store tracking one configuration read its 1.5x regression as the machine's
(the factor was that configuration), so ``detect --fail-on regression`` could never fire; one
tracking one operator in three shapes, forward and backward, did the same with six series. With
five operators, a change in two moves the median not at all."""


Points = Sequence[tuple[int, float]]
"""A series' (run, median) points in run order."""


def run_factors(series: Sequence[Points], operators: Sequence[object] | None = None) -> dict[int, float]:
    """Each run's machine factor, in log units: the median, over the operators it measured, of the
    median over each operator's series of its log median less that series' median log median
    (``operators`` names each series' operator; None: each series its own). One operator counts once
    however many configurations and phases it has: a change of its code moves them all. A run that
    measured fewer than ``MIN_FACTOR_OPERATORS`` operators has none (``factorless_runs``: its times
    are judged as measured). A run on a slow stretch of the machine moves every operator it measured
    alike; an operator's change moves its own. A change most operators share moves the factor too,
    and is no step of theirs (``shared_steps`` names it)."""
    return {
        run: statistics.median(statistics.median(found) for found in by_operator.values())
        for run, by_operator in _offsets(series, operators).items()
        if len(by_operator) >= MIN_FACTOR_OPERATORS
    }


def factorless_runs(series: Sequence[Points], operators: Sequence[object] | None = None) -> list[int]:
    """The runs too few operators measured for a machine factor (``MIN_FACTOR_OPERATORS``)."""
    return [
        run
        for run, by_operator in _offsets(series, operators).items()
        if len(by_operator) < MIN_FACTOR_OPERATORS
    ]


def _offsets(
    series: Sequence[Points], operators: Sequence[object] | None
) -> dict[int, dict[object, list[float]]]:
    """Per run and operator, each of its series' log median less that series' median log median
    (series of two runs or more)."""
    offsets: dict[int, dict[object, list[float]]] = defaultdict(lambda: defaultdict(list))
    for index, points in enumerate(series):
        if len(points) < 2:
            continue
        typical = statistics.median(math.log(median) for _, median in points)
        operator = operators[index] if operators is not None else index
        for run, median in points:
            offsets[run][operator].append(math.log(median) - typical)
    return offsets


def shared_steps(
    series: Sequence[Points],
    runs: Sequence[int],
    threshold: float,
    operators: Sequence[object] | None = None,
) -> list[tuple[int, Step]]:
    """The steps of the machine factor itself over ``runs`` (in time order), each with the run it
    begins at: where every configuration's level moved together and held. Taken out of each series as
    the machine's (a slower machine, a slow stretch), they can as well be a build that slowed almost
    everything alike: opperf cannot tell the two apart, so it names them apart from the configurations'
    steps and calls none of them a regression."""
    factors = run_factors(series, operators)
    ordered = [run for run in runs if run in factors]
    found = detect_steps([math.exp(factors[run]) for run in ordered], threshold) if len(ordered) > 1 else []
    return [(ordered[step.index], step) for step in found]


def judge(
    series: Sequence[Points],
    ticks: Sequence[float | None],
    threshold: float,
    alpha: float,
    operators: Sequence[object] | None = None,
) -> list[list[Step]]:
    """The steps of every series (each its (run, median) points in run order, and its timer's tick),
    after each run's machine factor is taken out (``run_factors``, by ``operators``); steps are kept
    where Benjamini-Hochberg over every step found holds them at FDR level ``alpha``. Steps report
    the series' own medians."""
    factors = run_factors(series, operators)
    found = []
    for points, tick in zip(series, ticks, strict=True):
        normalised = [median / math.exp(factors.get(run, 0.0)) for run, median in points]
        level = statistics.median(median for _, median in points) if points else 0.0
        floor = tick_floor(tick / level) if tick and level > 0 else 0.0
        found.append(detect_steps(normalised, threshold, floor) if normalised else [])
    flat = [step for steps in found for step in steps]
    q_values = iter(bh_qvalues([step.p for step in flat]))
    judged = [[replace(step, q=next(q_values)) for step in steps] for steps in found]
    kept = [
        [_own_levels(step, points, steps) for step in steps if cast(float, step.q) <= alpha]
        for points, steps in zip(series, judged, strict=True)
    ]
    # A step of the normalised series that the series' own medians do not show (x1.00: the run's
    # factor moved and it did not) is no step of its own.
    return [[step for step in steps if abs(math.log(step.ratio)) > math.log1p(threshold)] for steps in kept]


def _own_levels(step: Step, points: Sequence[tuple[int, float]], steps: Sequence[Step]) -> Step:
    """``step`` with its levels read from the series' own medians (not the normalised ones)."""
    cuts = [s.index for s in steps]
    position = cuts.index(step.index)
    start = cuts[position - 1] if position else 0
    end = cuts[position + 1] if position + 1 < len(cuts) else len(points)
    medians = [median for _, median in points]
    return replace(
        step,
        before=statistics.median(medians[start : step.index]),
        after=statistics.median(medians[step.index : end]),
    )


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
        nearest = logs[max(start, cut - MIN_HOLD) : cut], logs[cut : min(end, cut + MIN_HOLD)]
        if abs(statistics.median(after) - statistics.median(before)) <= minimum or not _apart(
            *nearest, minimum
        ):
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


def _apart(before: Sequence[float], after: Sequence[float], margin: float) -> bool:
    """Whether every run on one side of a step lies beyond every run on the other by ``margin``: a
    new level, not one odd run at a segment's end (a window of two holding one run at twice the time
    read as a step of 0.68x)."""
    return max(after) + margin < min(before) or min(after) > max(before) + margin


def steps_of(series: Sequence[Series], threshold: float, alpha: float = DEFAULT_ALPHA) -> list[list[Step]]:
    """``judge`` over a store's series (every series the store holds: each run's machine factor and
    the FDR control look at all of them, whatever a command then shows)."""
    ticks = [min((point.tick for point in s.points if point.tick), default=None) for s in series]
    return judge(_points(series), ticks, threshold, alpha, _operators(series))


def shared_steps_of(series: Sequence[Series], threshold: float) -> list[tuple[int, Step]]:
    """``shared_steps`` over a store's series, its runs in the order they were started."""
    runs = sorted({(point.started, point.run) for s in series for point in s.points})
    return shared_steps(_points(series), [run for _, run in runs], threshold, _operators(series))


def factorless_runs_of(series: Sequence[Series]) -> list[int]:
    """``factorless_runs`` over a store's series."""
    return factorless_runs(_points(series), _operators(series))


def _points(series: Sequence[Series]) -> list[list[tuple[int, float]]]:
    return [[(point.run, point.median) for point in s.points] for s in series]


def _operators(series: Sequence[Series]) -> list[tuple[str, str]]:
    """Each series' operator: its framework and its name as labels print it (``mx.nd.exp``)."""
    return [(s.key.framework, s.key.name) for s in series]
