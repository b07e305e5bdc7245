"""The decision rule: a row's verdict from its statistics, as pure functions.

A timing row is ``slower`` or ``faster`` only when all three hold:

(a) **the change is large**: |log ratio| exceeds both the threshold (log(1 + threshold)) and the
    pair's own noise, the larger of what the measurement can resolve (the two sides' relative
    median-interval half-widths, combined in quadrature; for paired rounds of an A/B job one tick of
    a quantising timer, ``diff.measured_noise``) and one standard error of the log ratio between
    runs (moderated and inflated, see ``inference``); where every round of an A/B job decided
    (``RowTest.every_round``), the smallest round's change exceeds the threshold and the resolution.
    (a) is about size; (b) and (c) about evidence;
(b) **it is significant with the run as the unit of replication**, in the direction of the raw
    ratio (the centred statistic has the same sign);
(c) **it survives Benjamini-Hochberg** at the FDR level ``alpha`` across the rows tested.

A row is ``same`` when two one-sided tests at 5% reject a change as large as the threshold either
way (Schuirmann's TOST): its ratio's 90% interval lies inside the threshold band
[1 / (1 + threshold), 1 + threshold]. Reports show the 95% interval, which may reach a little beyond
the band of a ``same`` row.
Anything else, and any row measured on a busy machine or with half or more of a side's runs short
of their precision target (``diff.doubt``), is ``inconclusive``: say so rather than guess.
"""

from __future__ import annotations

import math
from enum import Enum

from opperf.results.load import FAILING
from opperf.verdicts.inference import RowTest


class Verdict(str, Enum):
    """A row's verdict, in the order reports list them."""

    SLOWER = "slower"
    NEWLY_FAILING = "newly-failing"
    INCONCLUSIVE = "inconclusive"
    FASTER = "faster"
    FIXED = "fixed"
    NEW = "new"
    GONE = "gone"
    INCOMPARABLE = "incomparable"
    SAME = "same"


class FailOn(str, Enum):
    """Which verdicts make ``opperf diff`` exit 1."""

    REGRESSION = "regression"
    ANY_CHANGE = "any-change"
    NEVER = "never"

    def matches(self, verdict: Verdict) -> bool:
        if self is FailOn.REGRESSION:
            return verdict in (Verdict.SLOWER, Verdict.NEWLY_FAILING)
        if self is FailOn.ANY_CHANGE:
            return verdict not in (Verdict.SAME, Verdict.INCONCLUSIVE)
        return False


DEFAULT_THRESHOLD = 0.05
"""The smallest relative change worth a verdict (a diff's row, a comparison's, a history step), unless
``--threshold`` says otherwise."""

DEFAULT_ALPHA = 0.05
"""The false discovery rate level over a diff's rows or a history's steps, unless ``--alpha`` says
otherwise."""

STOP_SHARE = 0.1
"""A changed row stops getting rounds (an A/B job's, a comparison's) only when its q-value is within
this share of the FDR level: the looks after each round would otherwise add to its false-call rate."""


TICK_FLOOR = 1.5
"""Ticks of a quantising timer a change must exceed (a diff's or comparison's row, a history step):
more than one, so that a ratio of exactly one tick (5 us against 4 us, 1.25) is not called for a
rounding error in the tick's estimate (a 10% slowdown A/A job here called ``sum`` (10000, 1)
backward 1.25x slower so), and two ticks are."""


def tick_floor(share: float) -> float:
    """``TICK_FLOOR`` ticks of a quantising timer as a log change, where one tick is ``share`` of the
    time (0: a timer that does not quantise)."""
    return math.log1p(TICK_FLOOR * share)


def status_verdict(base: str | None, new: str | None) -> Verdict | None:
    """The verdict of a status transition (ok, skipped, failed, crashed, timeout; None: absent),
    or None when both sides ran and the timings decide. Skipped counts as not measured."""
    if base == "ok" and new in FAILING:
        return Verdict.NEWLY_FAILING
    if base in FAILING and new == "ok":
        return Verdict.FIXED
    if base == "ok" and new == "ok":
        return None
    if new == "ok":
        return Verdict.NEW
    if base == "ok":
        return Verdict.GONE
    return None


def resolution(base_precision: float, new_precision: float) -> float:
    """What the two sides' measurements resolve, in log units: their median intervals' relative
    half-widths combined in quadrature."""
    return math.log1p(math.hypot(base_precision, new_precision))


def noise(test: RowTest | None, measured: float) -> float:
    """The pair's own noise in log units: the larger of the measurement's resolution and one
    standard error of the log ratio between runs (which only a test provides); where every round
    decided (``RowTest.every_round``), their spread is the change's, not noise: the resolution."""
    if test is None or test.every_round is not None:
        return measured
    return max(measured, test.se)


def timing_verdict(
    estimate: float, test: RowTest | None, q: float | None, row_noise: float, threshold: float, alpha: float
) -> tuple[Verdict, str | None]:
    """The verdict of a row measured on both sides, with the reason when inconclusive."""
    if test is None or q is None:
        return Verdict.INCONCLUSIVE, "no estimate of the run-to-run noise: repeat the runs"
    band = math.log1p(threshold)
    change = abs(estimate) if test.every_round is None else test.every_round  # every round's, then
    large = change > max(band, row_noise)
    agrees = estimate * test.statistic > 0
    if large and agrees and q <= alpha:
        return (Verdict.SLOWER if estimate > 0 else Verdict.FASTER), None
    if abs(estimate) + test.equivalence < band:
        return Verdict.SAME, None
    if q <= alpha and not large:
        return Verdict.INCONCLUSIVE, "significant, but within the threshold or the pair's noise"
    return Verdict.INCONCLUSIVE, "the ratio's interval reaches beyond the threshold band"
