"""Verdicts between namespaces of one comparison (``opperf compare``): is ``mx.np.add`` as fast as
``mx.nd.add``, and as ``torch.add``?

A comparison measures each configuration in every namespace round after round, the namespaces taking
turns (``opperf.verdicts.compare.comparison``). Each other namespace is then an A/B job's new side against
the first
namespace's base: per phase, each round's ratio of the fastest passes, tested as a paired row of an
A/B job is (``inference``: the rounds' mean against their spread, and every round alone), corrected
for the rows of the comparison (Benjamini-Hochberg), and decided by the same rule as ``opperf diff``
(``decide.timing_verdict``). A point ratio of one run moved 40% run to run (mx.np over mx.nd ``add``:
1.11, 0.71, 1.02, 1.15, 0.89 in five runs); with its interval and verdict a reader can tell.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from opperf.measure.roofline.assessment import Calibration
from opperf.measure.roofline.assessment import flags as measurement_flags
from opperf.results.measurement import Measurement
from opperf.results.record import timer_tick
from opperf.utils.stats import relative_precision, robust_sd
from opperf.verdicts.decide import STOP_SHARE, Verdict, noise, tick_floor, timing_verdict
from opperf.verdicts.inference import Contrast, RowTest, assess, bh_qvalues, own_variance

STOP_WIDENING = 2.575829 / 1.959964
"""A ``same`` settles a configuration's rounds only when its interval, widened from 95% to 99%,
still lies inside the band, as a call settles them only at a tenth of the level: a look after every
round would otherwise stop a row near the band's edge at whichever early look first read ``same``,
and its verdict would follow that draw from run to run."""
NO_WORK_S = 10e-6
"""Below this a phase's median may be no computation at all (a gradient passed through, a view)..."""
NO_WORK_FACTOR = 50
"""...when another namespace takes this many times longer for the same phase."""


@dataclass(frozen=True)
class Versus:
    """One namespace against the first on one configuration and phase: the ratio of their times
    (other over first), its 95% interval, the verdict (``slower``: the other namespace is slower),
    why it is inconclusive, and the doubt flags of either side's rounds."""

    ratio: float
    low: float | None
    high: float | None
    verdict: Verdict
    reason: str | None
    flags: tuple[str, ...]
    q: float | None = None
    below_resolution: bool = False
    """Whether a tick of the timer is more than the threshold of the phase's time."""

    def settled(self, alpha: float, threshold: float) -> bool:
        """Whether more rounds would hardly change the verdict: called at a tenth of the level (as an
        A/B job stops a row, ``decide.STOP_SHARE``), ``same`` with its interval widened to 99%
        (``STOP_WIDENING``) still inside the band, or inconclusive below the timer's resolution."""
        if self.verdict is Verdict.INCONCLUSIVE:
            return self.below_resolution
        if self.verdict in (Verdict.SLOWER, Verdict.FASTER):
            return self.q is not None and self.q <= alpha * STOP_SHARE
        if self.low is None or self.high is None:
            return True
        half = (math.log(self.high) - math.log(self.low)) / 2 * STOP_WIDENING
        return abs(math.log(self.ratio)) + half < math.log1p(threshold)


Rounds = Mapping[str, Sequence[Measurement]]
"""A configuration's measurements by namespace, one per round, in round order."""


def versus(
    configurations: Sequence[Rounds], namespaces: Sequence[str], threshold: float, alpha: float
) -> dict[tuple[int, str, str], Versus]:
    """Every other namespace against the first, by (configuration index, namespace, phase), where
    both measured the phase in every round."""
    first = namespaces[0]
    found: list[tuple[tuple[int, str, str], Contrast, tuple[str, ...], float]] = []
    for index, rounds in enumerate(configurations):
        for namespace in namespaces[1:]:
            for phase in ("forward", "backward"):
                contrast = _contrast(rounds.get(first, ()), rounds.get(namespace, ()), phase)
                if contrast is not None:
                    flags = _flags(rounds[first], rounds[namespace])
                    sides = [*rounds[first], *rounds[namespace]]
                    found.append(((index, namespace, phase), contrast, flags, _tick_floor(sides, phase)))
    if not found:
        return {}
    _, tests = assess([contrast for _, contrast, _, _ in found], paired=True)
    tested = [i for i, test in enumerate(tests) if test is not None]
    q_of = dict(zip(tested, bh_qvalues([cast(RowTest, tests[i]).p for i in tested]), strict=True))
    result = {}
    for i, (where, contrast, flags, floor) in enumerate(found):
        test = tests[i]
        verdict, reason = timing_verdict(
            contrast.estimate, test, q_of.get(i), noise(test, floor), threshold, alpha
        )
        below_resolution = floor > math.log1p(threshold)
        spread = round_spread(contrast.rounds)
        if verdict is Verdict.SAME and below_resolution:
            verdict, reason = Verdict.INCONCLUSIVE, BELOW_RESOLUTION.format(math.expm1(floor))
        elif verdict is Verdict.SAME and spread > math.log1p(threshold):
            verdict, reason = Verdict.INCONCLUSIVE, ROUNDS_SCATTER.format(math.expm1(spread))
        result[where] = Versus(
            ratio=math.exp(contrast.estimate),
            low=math.exp(test.low) if test else None,
            high=math.exp(test.high) if test else None,
            verdict=verdict,
            reason=reason,
            flags=flags,
            q=q_of.get(i),
            below_resolution=below_resolution,
        )
    return result


BELOW_RESOLUTION = (
    "the timer's ticks ({:.0%} of this row's fastest pass, at 1.5 ticks) are coarser than the "
    "threshold: fastest passes that read alike can differ by more than it, so it cannot say same"
)
"""Why a row whose fastest passes the timer quantises more coarsely than the threshold is never
``same``: two namespaces both read 9 us, one tick of MXNet's profiler each, may be 9.0 and 9.9 us.
In five compare runs at load 2.4-3.3 such rows (``exp`` and ``sum`` backward on (10000, 1), about
10 us) were ``same`` in three and ``inconclusive`` in two: the verdict followed the noise."""


ROUNDS_SCATTER = (
    "its rounds scatter by {:.0%} (their ratios' robust spread), more than the threshold: the ratio "
    "follows the state the machine was in, and a mean of a few such rounds is no evidence of same"
)
"""Why a row whose rounds' ratios scatter beyond the threshold band is never ``same``: the
interval of their mean narrows as rounds are added, but where single rounds read 0.85 and 1.15 the
row's time depends on which of its modes each round met (cache, placement), and whether twenty
rounds' mean lands inside the 5% band is a draw. Five compare runs of mx.nd against mx.np at load
0.6-1.2 left softmax (1024, 1024) forward ``same`` in two and ``inconclusive`` in three, its rounds'
spread 5-15% in every run; with this guard it is ``inconclusive`` in all five. Kept when each round
got a fresh worker, which made rounds independent replicates: five comparisons of 40 rounds each
(load 1.6-3.6), replayed 100 times over reorderings of their rounds, kept every row's verdict in 4 of
5 runs with a probability of 0.77 with the guard and 0.13 without it (softmax (1024, 1024) rounds
scatter 6-19% under load, and whether their mean's interval fits the band was then the draw)."""


def round_spread(ratios: Sequence[float]) -> float:
    """The robust spread of a row's rounds' log ratios: their median absolute deviation from their
    median, scaled to a normal's standard deviation (0 for fewer than three rounds). One disturbed
    round does not move it; rounds that scatter everywhere do."""
    return robust_sd(ratios) if len(ratios) >= 3 else 0.0


def _contrast(base: Sequence[Measurement], new: Sequence[Measurement], phase: str) -> Contrast | None:
    """The rounds' log ratios of their fastest passes (new over base), where both sides measured the
    phase in every round."""
    pairs = [(getattr(b, phase), getattr(n, phase)) for b, n in zip(base, new, strict=False)]
    if not pairs or len(pairs) != len(base) or any(not b or not n or min(*b, *n) <= 0 for b, n in pairs):
        return None
    ratios = [math.log(min(n) / min(b)) for b, n in pairs]
    noise = [_own_variance(b) + _own_variance(n) for b, n in pairs]
    return Contrast.paired(ratios, math.log(statistics.median(min(b) for b, _ in pairs)), noise)


def _own_variance(samples: Sequence[float]) -> float:
    """A round's own variance of its log figure (``own_variance``; one pass: none)."""
    return own_variance(relative_precision(samples)) if len(samples) >= 2 else 0.0


def _tick_floor(measurements: Sequence[Measurement], phase: str) -> float:
    """``TICK_FLOOR`` ticks of a quantising timer as a share of the phase's fastest pass, in log units,
    as ``opperf diff`` holds a paired row to (4 us against 5 us on MXNet's profiler is one tick)."""
    samples = [getattr(m, phase) or () for m in measurements]
    ticks = [tick for found in samples if (tick := timer_tick(found))]
    fastest = min((min(found) for found in samples if found), default=0.0)
    return tick_floor(min(ticks) / fastest) if ticks and fastest > 0 else 0.0


def _flags(*sides: Sequence[Measurement]) -> tuple[str, ...]:
    """The doubt flags half or more of a side's rounds carried. Any round's would flag nearly every
    row: at twenty rounds on a loaded machine every row of five compare runs (mx.nd against mx.np,
    load 1.2-3.3) carried busy, imprecise and noisy, and a flag every row carries tells the reader
    nothing; the rounds' disagreement, which the row's test weighs, is what a disturbed minority
    costs."""
    flags: set[str] = set()
    for rounds in sides:
        counted = Counter(flag for measurement in rounds for flag in _round_flags(measurement))
        flags.update(flag for flag, count in counted.items() if 2 * count >= len(rounds))
    return tuple(sorted(flags))


_SHOWN_FLAGS = {"noisy": "noisy", "imprecise": "imprecise", "busy_machine": "busy"}
"""The measurement flags a comparison's rows show (``roofline.assessment.flags``), as they name them."""


def _round_flags(measurement: Measurement) -> set[str]:
    """One round's doubt flags: a phase's passes noisy, short of the precision target, a busy machine."""
    found = measurement_flags(measurement, Calibration())
    return {_SHOWN_FLAGS[flag] for flag in found if flag in _SHOWN_FLAGS}


def no_work_note(medians: Mapping[str, float], phase: str) -> str | None:
    """A note where one namespace's ``phase`` takes under ``NO_WORK_S`` while another takes
    ``NO_WORK_FACTOR`` times longer: it likely computes nothing (PyTorch's ``add`` backward passes the
    gradient through, 0.005 ms, against MXNet's 0.94 ms), and the ratio compares work with none."""
    fastest = min(medians, key=medians.__getitem__)
    slowest = max(medians, key=medians.__getitem__)
    if medians[fastest] >= NO_WORK_S or medians[slowest] < NO_WORK_FACTOR * medians[fastest]:
        return None
    return (
        f"{fastest}'s {phase} takes {medians[fastest] * 1e3:.4g} ms against {slowest}'s "
        f"{medians[slowest] * 1e3:.4g} ms: it likely computes nothing (a gradient passed through, a view)"
    )
