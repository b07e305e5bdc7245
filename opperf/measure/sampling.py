"""How many passes to run: a fixed count, or adaptively until the median is precise.

Adaptive warm-up runs passes until their times settle; adaptive measurement then runs passes until
the median's 95% confidence interval is within ``target`` of it, or the operator's time budget is
spent. Fixed counts keep the original opperf behaviour for users who want exactly N runs. Everything
here is a pure function of the passes it is given, an injectable clock and an injectable load meter,
so the stopping rules are tested deterministically.

A sample that a stretch of competing load inflated is measured again before the median is taken
(``retake_inflated``): passes are metered for other processes' CPU use in windows of at least
``LOAD_WINDOW_S``; a sample of a busy window (more than ``BUSY_THRESHOLD`` cores' worth of others)
that is more than ``INFLATION`` times the quiet windows' median is replaced by a new pass, and a
configuration whose samples stay inflated for the most part says so (``load_dominated``).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from opperf.utils.load import BUSY_THRESHOLD, CpuSnapshot, competing_load
from opperf.utils.stats import relative_precision

DEFAULT_TARGET = 0.02
"""Relative half-width of the median's confidence interval at which adaptive measurement stops."""

DEFAULT_BUDGET_S = 0.25
"""Seconds of warm-up and measurement per operator configuration in adaptive mode: small enough that a
sweep over every MXNet operator, forward and backward, fits in ten minutes on two cores."""

WARMUP_SHARE = 0.25
"""Part of the budget adaptive warm-up may use before measurement starts regardless."""

SETTLE_WINDOW = 3
"""Consecutive warm-up passes whose times must agree for warm-up to be over."""

SETTLE_TOLERANCE = 0.15
"""How far (relative) the slowest of the settle window may be above its fastest."""

MIN_RUNS = 10
"""The fewest samples adaptive measurement takes, its budget extended where passes are long (the
record says so: ``StopReason.EXTENDED``). With 5, ``layer_norm`` on (64, 128, 56, 56), 70 ms a
call, got 5 samples in the 0.25 s budget, and one busy stretch doubled its median (148 ms against
70): a median of 10 outlasts a stretch over 4 of them."""

JUDGED_RUNS = 5
"""The fewest samples whose median interval is judged against the target: with fewer, the interval
(order statistics) is the whole range of a handful of samples, narrow by chance. A plan's
``min_runs`` may be lower (a round of an A/B job takes its share of a configuration's minimum);
precision is still judged only from here on."""

CHECK_GROWTH = 1.1
"""Precision is rechecked each time the sample count grows by this factor, not after every pass, so
the check's own cost stays small next to microsecond operators."""


class StopReason(str, Enum):
    """Why measurement stopped."""

    FIXED = "fixed run count"
    PRECISE = "target precision met"
    BUDGET = "time budget spent"
    CAP = "sample cap reached"
    EXTENDED = "budget extended to the minimum samples"


MOST_SAMPLES = 100_000
"""The most samples a phase takes (``--runs``) and a results file holds: adaptive sampling stops at
``SamplingPlan.max_runs`` (1,000), an A/B job's rounds at a few hundred; ten million in a file took a
report's charts minutes and 7 GB, then failed."""


@dataclass(frozen=True)
class SamplingPlan:
    """How many warm-up and measured passes to run.

    ``warmup`` / ``runs`` of None mean adaptive. Adaptive runs take at least ``min_runs`` and at most
    ``max_runs`` samples; adaptive warm-up at most ``max_warmup`` passes.
    """

    warmup: int | None = None
    runs: int | None = None
    target: float = DEFAULT_TARGET
    budget_s: float = DEFAULT_BUDGET_S
    min_runs: int = MIN_RUNS
    max_runs: int = 1000
    max_warmup: int = 50

    @property
    def adaptive(self) -> bool:
        return self.runs is None

    def validated(self) -> SamplingPlan:
        """This plan; raises ValueError naming the first nonsensical field."""
        if self.warmup is not None and self.warmup < 0:
            raise ValueError(f"warmup must be >= 0, got {self.warmup}")
        if self.runs is not None and self.runs < 1:
            raise ValueError(f"runs must be >= 1, got {self.runs}")
        if not 0 < self.target < 1:
            raise ValueError(f"target precision must lie in (0, 1), got {self.target}")
        if self.budget_s <= 0:
            raise ValueError(f"time budget must be positive, got {self.budget_s}")
        if not 1 <= self.min_runs <= self.max_runs:
            raise ValueError(f"need 1 <= min_runs <= max_runs, got {self.min_runs}, {self.max_runs}")
        return self


OVERHEAD_PLAN = SamplingPlan(warmup=20, runs=200)
"""How backends calibrate the harness overhead: trivial calls, warmed up, then a fixed count measured."""


@dataclass(frozen=True)
class Sampled:
    """What a plan produced: the samples, the warm-up passes used, and how measurement ended.

    ``met_target`` is None for fixed runs (no target), else whether every phase's median reached it.
    """

    forward: tuple[float, ...]
    backward: tuple[float, ...] | None
    warmup_runs: int
    stop_reason: StopReason
    met_target: bool | None
    retaken: int = 0
    """Samples a stretch of competing load inflated, measured again (``retake_inflated``)."""
    load_dominated: bool = False
    """Whether half the samples or more stayed inflated by competing load after the retakes."""
    kept: tuple[int, ...] | None = None
    """Which of the measured passes, in the order they ran, the samples are (None: all of them);
    a sampler that reads its times afterwards (a profiler's events) keeps these."""


Pass = Callable[[], tuple[float, float | None]]
"""One measured pass: forward seconds, and backward seconds or None."""

Meter = Callable[[], CpuSnapshot]
"""Reads the machine's and this process's CPU time (``opperf.utils.load.snapshot``)."""

LOAD_WINDOW_S = 0.05
"""The shortest window of consecutive passes metered for competing load: /proc/stat counts in clock
ticks (10 ms), and a window of a few ticks reads no more than its own resolution."""

INFLATION = 1.25
"""A sample of a busy window above this many times the quiet windows' median was inflated by load."""

RETAKE_ROUNDS = 3
"""Rounds of retakes at most; each measures the inflated samples again, together."""

RETAKE_SHARE = 0.5
"""Retakes at most this share of the samples (a machine busy throughout has no quiet stretch to find)."""


def has_settled(times: Sequence[float]) -> bool:
    """Whether the last ``SETTLE_WINDOW`` pass times agree within ``SETTLE_TOLERANCE``."""
    if len(times) < SETTLE_WINDOW:
        return False
    window = times[-SETTLE_WINDOW:]
    return max(window) <= min(window) * (1 + SETTLE_TOLERANCE)


def warm_up(
    run_pass: Callable[[], float],
    plan: SamplingPlan,
    clock: Callable[[], float],
    warmed: Sequence[float] = (),
) -> int:
    """Run warm-up passes (``run_pass`` returns a pass's seconds); returns how many warm-up passes
    there were, counting ``warmed``: the seconds of full passes already run before (the first pass a
    session runs while preparing, to find whether a backward pass runs), which take the place of as many
    warm-up passes and open the window whose times must settle. They ran before ``clock`` started, so
    they take nothing from the budget."""
    if plan.warmup is not None:
        for _ in range(plan.warmup - len(warmed)):
            run_pass()
        return max(plan.warmup, len(warmed))
    start, times = clock(), list(warmed)
    while len(times) < plan.max_warmup and clock() - start < plan.budget_s * WARMUP_SHARE:
        times.append(run_pass())
        if has_settled(times):
            break
    return len(times)


def is_precise(samples: Sequence[float], target: float) -> bool:
    return relative_precision(samples) <= target


def met_target(forward: Sequence[float], backward: Sequence[float] | None, target: float) -> bool:
    """Whether samples meet a precision ``target``: ``JUDGED_RUNS`` of them or more, and each phase's
    median known within it."""
    return (
        len(forward) >= JUDGED_RUNS
        and is_precise(forward, target)
        and (not backward or is_precise(backward, target))
    )


class _LoadWindows:
    """Whether each measured pass ran in a busy window: consecutive passes are metered together for
    at least ``LOAD_WINDOW_S``, and each takes its window's verdict."""

    def __init__(self, meter: Meter | None, clock: Callable[[], float]) -> None:
        self._meter, self._clock = meter, clock
        self._opened = (clock(), meter()) if meter is not None else None
        self.busy: list[bool] = []

    def after(self, passes: int, closing: bool = False) -> None:
        """Close the window once it is long enough (or ``closing``), with ``passes`` taken so far."""
        if self._meter is None or self._opened is None:
            self.busy += [False] * (passes - len(self.busy))
            return
        started, before = self._opened
        if passes == len(self.busy) or (self._clock() - started < LOAD_WINDOW_S and not closing):
            return
        after = self._meter()
        load = competing_load(before, after)
        self.busy += [load is not None and load > BUSY_THRESHOLD] * (passes - len(self.busy))
        self._opened = (self._clock(), after)


def collect(
    measure_pass: Pass,
    plan: SamplingPlan,
    clock: Callable[[], float],
    warmup_runs: int = 0,
    meter: Meter | None = None,
) -> Sampled:
    """Measured passes per ``plan``, once ``warmup_runs`` warm-up passes have run; adaptive ones
    metered for competing load by ``meter`` (when given) and the inflated ones taken again."""
    forward: list[float] = []
    backward: list[float] = []
    windows = _LoadWindows(meter if plan.adaptive else None, clock)

    def take() -> None:
        forward_s, backward_s = measure_pass()
        forward.append(forward_s)
        if backward_s is not None:
            backward.append(backward_s)
        windows.after(len(forward))

    def result(reason: StopReason, met: bool | None) -> Sampled:
        windows.after(len(forward), closing=True)
        sampled = Sampled(tuple(forward), tuple(backward) or None, warmup_runs, reason, met)
        if meter is None or not plan.adaptive:
            return sampled
        retaken = retake_inflated(sampled, windows, take, forward, backward)
        if met is None or not retaken.retaken:
            return retaken
        return replace(retaken, met_target=met_target(retaken.forward, retaken.backward, plan.target))

    if plan.runs is not None:
        for _ in range(plan.runs):
            take()
        return result(StopReason.FIXED, None)

    def precise() -> bool:
        return met_target(forward, backward, plan.target)

    start, next_check = clock(), max(plan.min_runs, JUDGED_RUNS)
    extended = False  # the budget ran out before the minimum samples were taken
    while True:
        take()
        if len(forward) >= next_check:
            if precise():
                return result(StopReason.PRECISE, True)
            next_check = max(len(forward) + 1, math.ceil(len(forward) * CHECK_GROWTH))
        if len(forward) < plan.min_runs:
            extended = extended or clock() - start >= plan.budget_s
            continue
        if len(forward) >= plan.max_runs:
            return result(StopReason.CAP, precise())
        if clock() - start >= plan.budget_s:
            return result(StopReason.EXTENDED if extended else StopReason.BUDGET, precise())


def retake_inflated(
    sampled: Sampled,
    windows: _LoadWindows,
    take: Callable[[], None],
    forward: list[float],
    backward: list[float],
) -> Sampled:
    """``sampled`` with each sample a stretch of competing load inflated replaced by one measured
    again (``take`` appends a pass to ``forward``/``backward`` and meters it in ``windows``), in up
    to ``RETAKE_ROUNDS`` rounds and ``RETAKE_SHARE`` of the samples; says so in ``retaken``,
    ``load_dominated`` and ``kept`` (which passes the samples are)."""
    kept = list(range(len(sampled.forward)))
    budget = int(RETAKE_SHARE * len(kept))
    retaken = 0
    for _ in range(RETAKE_ROUNDS):
        inflated = _inflated(kept, windows.busy, forward, backward)
        count = min(len(inflated), budget - retaken)
        if count <= 0:
            break
        first = len(forward)
        for _ in range(count):
            take()
        windows.after(len(forward), closing=True)
        for position, new in zip(inflated[:count], range(first, len(forward)), strict=True):
            kept[position] = new
        retaken += count
    inflated = _inflated(kept, windows.busy, forward, backward)
    if not retaken and not inflated:
        return sampled
    return replace(
        sampled,
        forward=tuple(forward[i] for i in kept),
        backward=tuple(backward[i] for i in kept) if backward else None,
        retaken=retaken,
        load_dominated=2 * len(inflated) >= len(kept),
        kept=tuple(kept),
    )


def _inflated(
    kept: Sequence[int], busy: Sequence[bool], forward: Sequence[float], backward: Sequence[float]
) -> list[int]:
    """Positions in ``kept`` of samples from busy windows above ``INFLATION`` times the median of
    the quiet ones (of all, with fewer than three quiet), forward or backward."""
    quiet = [i for i in kept if not busy[i]]
    reference = quiet if len(quiet) >= 3 else list(kept)

    def above(times: Sequence[float]) -> Callable[[int], bool]:
        limit = INFLATION * statistics.median(times[i] for i in reference)
        return lambda i: times[i] > limit

    checks = [above(forward)] + ([above(backward)] if backward else [])
    return [position for position, i in enumerate(kept) if busy[i] and any(check(i) for check in checks)]


def sample(
    run_pass: Callable[[], float],
    measure_pass: Pass,
    plan: SamplingPlan,
    clock: Callable[[], float] = time.perf_counter,
    warmed: Sequence[float] = (),
    meter: Meter | None = None,
) -> Sampled:
    """Warm up (``warmed``: passes already run, see ``warm_up``), then measure, sharing one time
    budget: measurement gets what warm-up left. ``meter`` meters the measured passes for
    competing load (``retake_inflated``)."""
    start = clock()
    warmup_runs = warm_up(run_pass, plan, clock, warmed)
    remaining = max(plan.budget_s - (clock() - start), plan.budget_s * (1 - WARMUP_SHARE))
    return collect(measure_pass, replace(plan, budget_s=remaining), clock, warmup_runs, meter)
