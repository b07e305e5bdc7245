"""Which configurations of an A/B job get another round: sequential rounds, stopped when decided.

Rows differ in how many paired rounds they need. A row whose rounds agree closely is ``same``
after three; a row whose rounds scatter by 10% (a 3 ms configuration with a pass or two a round, or
one disturbed by the other processes on the machine) needs a dozen before a 10% change stands out
(measured here: six rounds left 20 of 58 rows with an injected 10% slowdown ``inconclusive``, with
five rounds of six agreeing on 1.10 and one far off). A fixed number of rounds spends too much on
the first and too little on the second; so every configuration gets ``min_rounds`` rounds, then
after each round the job asks ``opperf.verdicts.diff`` (the same code, on the rounds so far, that
``opperf diff AB.json`` runs on the file) what it would say, and only configurations it leaves
undecided get another round, up to ``max_rounds``, within the job's budget for rounds after the
minimum (``extra_share`` of what the minimum rounds spent, or ``least_extra_s``): the rounds go
first to rows whose every round so far changed beyond ``DECISIVE_FACTOR``, then to the undecided
configurations a round of which costs no more than an equal share of the budget left
(``RoundBook.undecided``).

Decided, so stopped: every row of the configuration is ``same`` (its ratio's interval lies inside
the threshold band), or called ``slower``/``faster`` at ``STOP_SHARE`` of the FDR level (a tenth),
or has a status verdict (it failed on a side), or is inconclusive below the timer's resolution (one
tick is more than the threshold of its time, ``diff.below_resolution``: its rounds read mostly the
same count of ticks, and more of them add little). The false-call rate stays that of the final test:

- A row stopped as ``same`` has |log ratio| below the band, and the final test calls a row only
  beyond it: its rounds are final and can never be called. A row's false call therefore needs it
  never to have looked ``same``, and then its final test is on all ``max_rounds`` rounds (fewer
  where the job's budget ran out, which follows its rounds' cost, not its ratio, but for the rows
  changed beyond ``DECISIVE_FACTOR`` in every round, which an unchanged row next to never is), as
  in a fixed design: stopping for ``same`` can only remove false calls.
- A row stopped as changed was called at the stricter level; over the looks, at most
  ``max_rounds - min_rounds`` of them, that adds at most a few tenths of the FDR level to its error
  (the looks are positively dependent, so far less than their sum).

The A/A scenario of ``benchmarks.regression_detection`` checks it on the whole selection (the noise
model of the final test is fitted to rows with different round counts, which the argument above
takes as given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from opperf.results.document import record
from opperf.results.key import Key
from opperf.results.load import Run
from opperf.results.measurement import BenchmarkSpec, Measurement
from opperf.results.record import Record, read_record
from opperf.utils.errors import OpperfError
from opperf.verdicts.decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD, STOP_SHARE, Verdict
from opperf.verdicts.diff import Row, below_resolution, diff

EXTRA_SHARE = 1.0
"""The sampling all rounds after ``min_rounds`` may spend together, as a share of what the
``min_rounds`` rounds spent: a job costs at most twice its minimum rounds. Four full-registry A/A
jobs beside a looping test suite (load 2.9-3.5), this share and 0.5 alternating: 74.2% and 75.7%
``same`` at 409 and 374 s against 67.8% and 66.2% at 413 and 359 s (the budget ran out with
rounds 6-8 given to the configurations it could still decide; with this share 116-120 got all
ten), none called in any. Earlier, with a cap of four sweep budgets on each configuration instead,
20 slow configurations (100 ms a pass) stopped after two rounds however undecided while cheap ones
left most of theirs unspent."""
PROMISING_SHARES = 4.0
"""An undecided row whose ratio so far lies beyond the threshold band goes before the rows near 1,
and its configuration's round may cost this many equal shares of the budget left: the rows that
may yet be called a change get the rounds that decide them (in 578-row jobs with 10% injected, the
affected rows left ``inconclusive`` were the costly ones, denied a round by the equal share)."""

DECISIVE_FACTOR = 2.0
"""An undecided row whose every round so far changed beyond this factor, in one direction, gets its
next round before any other: a job should not end with such a change left ``inconclusive``."""


@dataclass(frozen=True)
class Schedule:
    """How many rounds configurations get: ``min_rounds`` each, up to ``max_rounds`` for those the
    diff of the rounds so far leaves undecided (within ``threshold`` at FDR level ``alpha``), while
    the rounds after the minimum have spent less than ``extra_share`` of the sampling the minimum
    rounds spent, or ``least_extra_s``, both sides together (None: no limit)."""

    min_rounds: int
    max_rounds: int
    threshold: float = DEFAULT_THRESHOLD
    alpha: float = DEFAULT_ALPHA
    extra_share: float | None = EXTRA_SHARE
    least_extra_s: float = 0.0
    """The sampling the rounds after the minimum may spend however little the minimum rounds spent
    (a job of a few cheap configurations)."""
    promising_shares: float = PROMISING_SHARES
    """How many equal shares of the budget left a round of a configuration with a row beyond the
    threshold band may cost (1: no more than any other)."""

    @property
    def adaptive(self) -> bool:
        return self.max_rounds > self.min_rounds

    def looks_after(self, rounds_done: int) -> bool:
        """Whether the job decides after ``rounds_done`` rounds (and a further round may follow)."""
        return self.adaptive and self.min_rounds <= rounds_done < self.max_rounds

    def describe(self) -> dict[str, object]:
        return {
            "min_rounds": self.min_rounds,
            "max_rounds": self.max_rounds,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "stop_alpha": self.alpha * STOP_SHARE,
            "extra_share": self.extra_share,
            "least_extra_s": self.least_extra_s,
            "promising_shares": self.promising_shares,
            "rule": "after min_rounds, a configuration gets another round until every row is same, "
            "slower or faster at q <= stop_alpha, has a status verdict or is inconclusive with one "
            "tick of the timer above the threshold of its time, or max_rounds are done; the rounds "
            "after min_rounds spend at most extra_share of the sampling the first min_rounds spent, "
            "or least_extra_s if more (both sides), going first to rows whose every round changed beyond "
            f"{DECISIVE_FACTOR:g}x one way, then to rows whose ratio lies beyond the threshold, whose "
            "round may cost promising_shares times the budget left divided by the configurations "
            "undecided, then, cheapest first, to configurations whose last round costs no more than "
            "that share",
        }


class RoundBook:
    """The rounds measured so far, as the runs ``opperf diff`` reads from an A/B file (round r of
    each side is run r), each measurement converted once, and what each round spent sampling."""

    def __init__(self, varied: tuple[str, ...] = ()) -> None:
        """``varied``: the run options the sides set otherwise; rows pair across them."""
        self._left_out = {name: None for name in varied}
        self._records: dict[tuple[str, int], dict[Key, Record]] = {}
        self._specs: dict[Key, BenchmarkSpec] = {}
        self._round_spent: dict[int, float] = {}
        self._latest: dict[BenchmarkSpec, tuple[int, float]] = {}

    def add(
        self, round_index: int, side: str, measurement: Measurement, spec: BenchmarkSpec | None = None
    ) -> None:
        """Book a side's measurement of the job's configuration ``spec`` (the measurement's own,
        unless the side measured it with options of its own)."""
        spec = spec or measurement.spec
        converted = read_record(record(measurement), f"{side} round {round_index}")
        key = converted.key.replacing(**self._left_out) if self._left_out else converted.key
        self._records.setdefault((side, round_index), {})[key] = replace(converted, key=key)
        self._specs[key] = spec
        spent = measurement.sampling_s or 0.0
        self._round_spent[round_index] = self._round_spent.get(round_index, 0.0) + spent
        latest, so_far = self._latest.get(spec, (round_index, 0.0))
        self._latest[spec] = (round_index, spent + (so_far if latest == round_index else 0.0))

    def runs(self, side: str) -> tuple[Run, ...]:
        indices = sorted(index for s, index in self._records if s == side)
        return tuple(Run(f"{side} round {index}", self._records[side, index]) for index in indices)

    def round_cost(self, spec: BenchmarkSpec) -> float:
        """The sampling a configuration's latest round spent, both sides: what its next will."""
        return self._latest.get(spec, (0, 0.0))[1]

    def budget_left(self, schedule: Schedule) -> float:
        """Seconds of sampling the rounds after the minimum may still spend (inf: no limit)."""
        if schedule.extra_share is None:
            return math.inf
        minimum = sum(s for index, s in self._round_spent.items() if index < schedule.min_rounds)
        extra = sum(s for index, s in self._round_spent.items() if index >= schedule.min_rounds)
        return max(schedule.extra_share * minimum, schedule.least_extra_s) - extra

    def undecided(self, schedule: Schedule, active: Sequence[BenchmarkSpec]) -> list[BenchmarkSpec]:
        """Those of ``active`` that get another round, in ``active``'s order: a row of theirs is not
        yet decided (all of them when the rounds so far cannot be diffed, e.g. the sides share no
        configuration), and the job's budget left pays for it: first those with a row changed beyond
        ``DECISIVE_FACTOR`` in every round, then the rest cheapest first, each only while its round
        costs no more than an equal share of the budget left among all undecided configurations.

        A configuration not chosen at a look gets no further round, so the share keeps a few slow
        ones from spending in the next rounds what the many cheap ones need for all of theirs: in a
        full-registry A/A job without it, nine configurations of 100 ms a pass took five rounds
        each and the budget ran out at round seven (73.4% ``same``, against 75.6% when each
        configuration had its own cap of four sweep budgets); in a job of a few slow configurations
        the share is large and they get their rounds."""
        try:
            rows = diff(
                self.runs("base"), self.runs("new"), schedule.threshold, schedule.alpha, paired=True
            ).rows
        except OpperfError:
            open_specs, decisive, promising = set(active), set(), set()
        else:
            undecided_rows = [row for row in rows if row.key in self._specs and not decided(row, schedule)]
            open_specs = {self._specs[row.key] for row in undecided_rows}
            decisive = {self._specs[row.key] for row in undecided_rows if changed_every_round(row)}
            promising = {
                self._specs[row.key] for row in undecided_rows if beyond_band(row, schedule.threshold)
            }
        candidates = open_specs & set(active)
        left = self.budget_left(schedule)
        fair_share = left / len(candidates) if candidates else 0.0

        def allowed(spec: BenchmarkSpec) -> float:
            if spec in decisive:
                return math.inf
            return schedule.promising_shares * fair_share if spec in promising else fair_share

        granted = set()
        order = sorted(candidates, key=lambda s: (s not in decisive, s not in promising, self.round_cost(s)))
        for spec in order:
            cost = self.round_cost(spec)
            if cost <= left and cost <= allowed(spec):
                granted.add(spec)
                left -= cost
        return [spec for spec in active if spec in granted]


def changed_every_round(row: Row, factor: float = DECISIVE_FACTOR) -> bool:
    """Whether every paired round of a row has new over base beyond ``factor``, all one way."""
    if row.base is None or row.new is None or not row.base.run_paired:
        return False
    ratios = [
        new / base for base, new in zip(row.base.run_paired, row.new.run_paired, strict=False) if base > 0
    ]
    return bool(ratios) and (min(ratios) > factor or max(ratios) < 1 / factor)


def beyond_band(row: Row, threshold: float) -> bool:
    """Whether a row's ratio so far lies beyond the threshold band: a change it may yet be called."""
    return row.ratio is not None and abs(math.log(row.ratio)) > math.log1p(threshold)


def decided(row: Row, schedule: Schedule) -> bool:
    """Whether a row needs no further round: ``same``, changed at the stopping level, a status
    verdict (anything but a timing verdict), or inconclusive below the timer's resolution."""
    if row.verdict is Verdict.INCONCLUSIVE:
        return below_resolution(row, schedule.threshold)
    if row.verdict in (Verdict.SLOWER, Verdict.FASTER):
        return row.q is not None and row.q <= schedule.alpha * STOP_SHARE
    return True


def rounds_run(counts: Mapping[BenchmarkSpec, int]) -> dict[str, int]:
    """How many configurations got how many rounds, for the A/B file (keys: round counts)."""
    histogram: dict[str, int] = {}
    for count in sorted(counts.values()):
        histogram[str(count)] = histogram.get(str(count), 0) + 1
    return histogram
