"""Is a row's change real? Moderated t statistics with an empirical null, and FDR control.

The unit of replication is the run (a sweep), never one run's samples: samples of one run share the
machine's momentary speed, so their spread says nothing about how far the next run will land (two
identical sweeps here differ by a p90 of 40-71% per configuration). Each row is therefore reduced to
a ``Contrast``: a log ratio ``estimate``, the residual ``variance`` of one replicate around it with
its degrees of freedom, and the ``unscaled`` factor that turns a replicate's standard deviation into
the estimate's standard error (limma's ``stdev.unscaled``): sqrt(1/k_base + 1/k_new) for k runs per
side, sqrt(1/m) for m paired rounds of an interleaved A/B job (``Contrast.paired``).

Each row is tested twice, and called changed only when both tests reject (an intersection-union
test, Berger 1982, so the pair keeps the level of each):

- **Against the diff's empirical null (Efron).** Most rows of a sweep do not change, so the spread
  of the log ratios across the whole diff is the machine's run-to-run noise for this design,
  whatever the number of runs: their median is the null's centre and their scale comes from the
  median absolute deviation. The null is a scaled Student t, not a normal, because the measured
  noise is heavy-tailed: the p90 of |log ratio| is 7-10 times its median here, against 2.4 for a
  normal and 6.3 for a Cauchy; a normal scaled by the MAD would call about a tenth of unchanged
  rows changed. Its degrees of freedom come from the ratio of the 75% to the 50% quantile of
  |log ratio - centre| (``fit_ratio_null``), the central part, where changed rows are rare. This
  test is what protects against the machine's stretches: runs of one side, taken back to back,
  share a stretch and agree closely while both differing from the other side (two sweeps each
  side: sqrt (1024, 1024) read 15.8 ms twice, then 3.7 ms twice), which no variance within a side
  can see.
- **Against the row's own run-to-run variance**, when a side has two runs or more: limma's moderated
  t (Smyth 2004). Each row's variance is shrunk towards a scaled inverse-χ² prior fitted to all
  rows' variances (``fit_variance_prior``), so a row with two lucky runs does not look precise, and
  the t has d0 + df degrees of freedom. This catches rows noisier than the diff's typical row,
  which the empirical null cannot see.

Paired rounds of an A/B job (each round in fresh workers on both sides, ``opperf.verdicts.ab.job``) are
different:
the machine's stretches cancel within a round's pair (the sides take turns, configuration by
configuration) and the workers' state is drawn anew each round, so a row's rounds are independent
replicates, rows differ in their own noise by design (a 20 ms configuration gets a pass or two a
round, a 20 us one hundreds), and no centre is taken out (a change every operator shares is the
builds' change, not the machine's). A paired row is tested on its own rounds alone, two ways, and
the level is split between them (``CONSISTENCY_SHARE``, a weighted Bonferroni combination):

- **The rounds' mean** against their moderated spread: Yuen's trimmed contrast (``trimmed``; on a
  loaded machine one round in six is often 30-60% off while the others agree within 5%, and a mean
  and variance of all six let that round hide a 10% change), its variance shrunk towards a prior
  that follows the rows' level (their log time, ``fit_variance_prior``). No null fitted to the
  rows' ratios joins it: in a job of the operators a change touched, most rows changed, such a null
  takes the changes for noise, and it held every unchanged row of a oneDNN on/off job
  ``inconclusive`` at +-10% after ten rounds whose ratios agreed within 1%.
- **Every round alone** against an unchanged row's round (``consistency``): an intersection-union
  test, which rejects only when each round does, so its level holds however the rounds depend on
  each other. A round's null is fitted to the rounds' residuals around their rows' estimates, which
  no change moves (``fit_round_null``), in units of the round's expected noise (the prior's scale at
  its level plus the round's own variance from its passes). It decides where a change's size varies
  from round to round: two rounds 100x and 900x slower have a spread that puts their mean's
  interval around 1 (a Convolution read 304x ``inconclusive``, interval 0.0001-8e8, so), yet no
  unchanged row's round comes near either; the interval is then the hull of the rounds' own.

A paired row of one round has no replicate and is not tested (a job stopped after its first round).

Rows of separate sweeps with ``REPLICATED_RUNS`` runs a side or more are tested the same way
(``Contrast.standardisable``). Their raw log ratios follow a null of about one degree of freedom
here (a Cauchy: a few rows of each sweep land on a stretch), against which no row reaches
significance (three sweeps a side with a 25% slowdown injected: 0 of 57 rows called, a Convolution
backward 1.20x slower, interval [1.12, 1.29], at q 0.11). Their own variance sees what the null
cannot: three runs a side show each row's spread, and the scores' null scales it by how far runs
taken back to back understate the noise between the sides (1.5-1.9 here). Each side's slowest run is
trimmed first (``trimmed_slow``): what disturbs a sweep only slows it, and one run on a slow stretch
otherwise widened its row's interval past a 25% change. With fewer runs the row's variance rests on
one degree of freedom or two, and two sweeps a side that drifted apart (the stored A/A sweeps of the
tests) had rows called both ways so: those keep the raw null.

The centre is the machine factor: when one side ran in a slower stretch, every row moves, and that
is not the operators' doing (a change that slows every operator alike shows in the summary's
geometric mean and machine factor instead). Sweep-wide estimates need ``MIN_ROWS`` rows; with fewer
the centre is 0 (a ratio of 1), there is no empirical null, and only rows with replicates are
tested (then the machine's stretches are not guarded against). p-values become q-values by
Benjamini-Hochberg over the rows tested (``bh_qvalues``).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from opperf.utils.stats import quantile
from opperf.verdicts.distributions import digamma, normal_ppf, t_ppf, t_sf, trigamma, trigamma_inverse

MIN_ROWS = 20
"""Rows a sweep-wide estimate (centre, prior, inflation) needs; fewer give none."""
REPLICATED_RUNS = 3
"""Runs a side a row of separate sweeps needs to be tested on its own scale (``Contrast.standardisable``)."""

CONFIDENCE = 0.95
"""The level of a row's interval, as reports show it."""
EQUIVALENCE_CONFIDENCE = 0.90
"""The level of the interval ``same`` holds inside the threshold band: two one-sided tests at 5%
(Schuirmann's TOST, the standard test of equivalence) reject both "slower by the threshold or more"
and "faster by it or more" exactly when the 90% interval lies inside the band. Held to the 95%
interval, a test at 2.5% a side (replayed offline on two recorded A/A jobs over the full registry),
rows took 8-9% more paired rounds to become ``same`` (6971 against 6407, 6784 against 6300), and
83 and 53 more stayed ``inconclusive``."""
TAIL_QUANTILE = 0.75
"""The quantile of |residual| the null's tail weight is read from, against the median."""
_DF_RANGE = (0.5, 1000.0)
"""Degrees of freedom a ratio prior is fitted within; heavier than 0.5 is taken as 0.5, lighter
than 1000 as the normal."""


@dataclass(frozen=True)
class Contrast:
    """One row's evidence of change, on the log scale (new over base).

    ``variance`` is a replicate's residual variance with ``df`` degrees of freedom (None and 0
    without replicates); the estimate's standard error is sqrt(variance) · ``unscaled``. ``from_rounds``
    says the replicates are rounds of an interleaved A/B job.
    """

    estimate: float
    variance: float | None
    df: int
    unscaled: float
    from_rounds: bool = False
    level: float | None = None
    fewest_runs: int = 0
    rounds: tuple[float, ...] = ()
    round_noise: tuple[float, ...] = ()

    @property
    def standardisable(self) -> bool:
        """Whether the row's own noise is known well enough to test it on its own scale against
        the standardised null: paired rounds, or ``REPLICATED_RUNS`` runs a side and more."""
        return self.from_rounds or self.fewest_runs >= REPLICATED_RUNS

    @classmethod
    def two_sample(cls, base: Sequence[float], new: Sequence[float]) -> Contrast:
        """Runs of each side (log medians, one per run). With ``REPLICATED_RUNS`` runs a side and
        more, each side's slowest runs are trimmed (``trimmed_slow``): the difference of the trimmed
        means, and their pooled variance. With fewer, the difference of the sides' medians, and the
        pooled variance around each side's mean."""
        if not base or not new:
            raise ValueError("a two-sample contrast needs at least one run per side")
        fewest = min(len(base), len(new))
        if fewest >= REPLICATED_RUNS:
            (base_mean, base_variance, base_df), (new_mean, new_variance, new_df) = map(
                trimmed_slow, (base, new)
            )
            df = base_df + new_df
            return cls(
                estimate=new_mean - base_mean,
                variance=(base_df * base_variance + new_df * new_variance) / df,
                df=df,
                unscaled=math.sqrt(1 / len(base) + 1 / len(new)),
                fewest_runs=fewest,
            )
        df = len(base) + len(new) - 2
        squares = sum((x - statistics.fmean(side)) ** 2 for side in (base, new) for x in side)
        return cls(
            estimate=statistics.median(new) - statistics.median(base),
            variance=squares / df if df else None,
            df=df,
            unscaled=math.sqrt(1 / len(base) + 1 / len(new)),
            fewest_runs=fewest,
        )

    @classmethod
    def paired(
        cls, log_ratios: Sequence[float], level: float | None = None, round_noise: Sequence[float] = ()
    ) -> Contrast:
        """Paired rounds of an interleaved A/B job, each a log ratio new over base: Yuen's trimmed
        one-sample contrast (``trimmed``), so one outlying round neither moves the estimate nor
        hides a change in a variance it alone inflates. ``level``: the row's log time, which its
        variance prior follows (``fit_variance_prior``). ``round_noise``: each round's own variance
        of its log ratio (from its passes), which the rounds' consistency test adds to the
        machine's (``consistency``); none: 0."""
        if not log_ratios:
            raise ValueError("a paired contrast needs at least one round")
        estimate, variance, df = trimmed(log_ratios)
        return cls(
            estimate=estimate,
            variance=variance,
            df=df,
            unscaled=math.sqrt(1 / len(log_ratios)),
            from_rounds=True,
            level=level,
            rounds=tuple(log_ratios),
            round_noise=tuple(round_noise) or (0.0,) * len(log_ratios),
        )


TRIM = 0.2
"""The share of rounds trimmed from each end of a paired row's sorted log ratios (Yuen's 20%)."""


def trimmed(values: Sequence[float], share: float = TRIM) -> tuple[float, float | None, int]:
    """Yuen's trimmed one-sample statistics (Wilcox, Introduction to Robust Estimation, 4.3):
    with g = floor(share · n) values cut from each end of the sorted ``values``, the mean of the
    rest; the winsorised variance (each cut value replaced by its nearest kept one) over
    (1 - 2·share)², so that times 1/n it is the trimmed mean's squared standard error; and
    n - 2g - 1 degrees of freedom. Six rounds lose their extreme pair: a round disturbed by another
    process, 30-60% off where the other five agree within 5% (measured here), no longer widens the
    row's interval past a 10% change. (None, 0) for the variance of a single value."""
    g = math.floor(share * len(values))
    if len(values) - 2 * g < 2:
        return statistics.fmean(sorted(values)[g : len(values) - g]), None, 0
    return _winsorised_trim(values, g, g)


def trimmed_slow(values: Sequence[float], share: float = TRIM) -> tuple[float, float, int]:
    """One side's runs of separate sweeps, trimmed at the slow end only: max(1, floor(share · n))
    of the largest ``values`` cut, the mean of the rest, the winsorised variance over (1 - g/n)²
    (so that times 1/n it is the trimmed mean's squared standard error, as in ``trimmed``), and
    n - g - 1 degrees of freedom. What disturbs a sweep here only ever slows it: a run that landed
    on a slow stretch of the machine is off at the slow end, while the others agree. Three sweeps a
    side with a 25% slowdown injected missed 10 of 56 rows so, each with one run 30-45% slower than
    its side's other two (``exp`` (1024, 1024) forward base: 3186, 4596 and 3310 us)."""
    return _winsorised_trim(values, 0, max(1, math.floor(share * len(values))))


def _winsorised_trim(values: Sequence[float], low: int, high: int) -> tuple[float, float, int]:
    """``values`` sorted, ``low`` of the smallest and ``high`` of the largest cut (at least two
    kept): the mean of the rest, the winsorised variance (each cut value replaced by its nearest
    kept one) over (kept share)², and kept - 1 degrees of freedom (``trimmed``, ``trimmed_slow``)."""
    ordered = sorted(values)
    kept = ordered[low : len(ordered) - high]
    winsorised = [kept[0]] * low + kept + [kept[-1]] * high
    variance = statistics.variance(winsorised) / (len(kept) / len(ordered)) ** 2
    return statistics.fmean(kept), variance, len(kept) - 1


@dataclass(frozen=True)
class Prior:
    """The scaled inverse-χ² prior of the rows' run-to-run variances: scale ``s2``, ``df`` degrees
    of freedom (infinite: every row has variance s2). ``source`` says what it was fitted to."""

    s2: float
    df: float
    source: str
    trend: tuple[tuple[float, float], ...] = ()

    @functools.cached_property
    def _levels(self) -> list[float]:
        return [x for x, _ in self.trend]

    def scale_at(self, level: float | None) -> float:
        """The prior's scale for a row at ``level``: ``s2``, or where the prior has a ``trend``
        ((level, s2) knots in level order), its linear interpolation, flat beyond the ends."""
        if not self.trend or level is None:
            return self.s2
        index = bisect.bisect_left(self._levels, level)
        if index == 0:
            return self.trend[0][1]
        if index == len(self._levels):
            return self.trend[-1][1]
        (x0, y0), (x1, y1) = self.trend[index - 1], self.trend[index]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (level - x0) / (x1 - x0)


MAX_PRECISION = 1.0
"""A round's relative median interval half-width counts as at most this (the interval of a round of
two passes can be as wide as the passes are far apart)."""


def own_variance(precision: float) -> float:
    """The variance of a round's log figure from its median's relative 95% interval half-width
    (``precision``, at most ``MAX_PRECISION``): a half-width is about 1.96 standard errors."""
    return (min(precision, MAX_PRECISION) / t_ppf(0.975, math.inf)) ** 2


@dataclass(frozen=True)
class NoiseModel:
    """What the whole diff says about noise: the null's ``centre`` (the log machine factor), the
    empirical ``null`` of the log ratios (scale² ``s2``, ``df``), the ``prior`` of the rows' own
    variances (each None when too few rows give one) and the number of rows it was fitted to."""

    centre: float
    null: Prior | None
    prior: Prior | None
    rows: int
    standardised: Prior | None = None
    rounds: Prior | None = None
    """Paired rows: the null of a single round's log ratio in units of its expected noise (the prior's
    scale at the row's level plus the round's own variance), fitted to the rounds' residuals around
    their rows' estimates, which no change moves (``fit_round_null``)."""


@dataclass(frozen=True)
class RowTest:
    """A row's test: the centred log ratio's sign-carrying ``statistic`` (of the test giving the
    larger p), the standard error of the estimate (the larger of the two tests'), the two-sided
    ``p`` (the larger), the 95% interval ``low``-``high`` of the raw log ratio (the hull of the
    two tests' intervals), and ``equivalence``, the half-width of the hull's 90% counterpart, which
    ``same`` holds inside the threshold band (``EQUIVALENCE_CONFIDENCE``)."""

    statistic: float
    se: float
    p: float
    low: float
    high: float
    equivalence: float
    every_round: float | None = None
    """Where the rounds' consistency decided (``consistency``): the smallest change any round saw,
    in log units; None where the rounds' mean did."""


def fit_variance_prior(
    variances: Sequence[float], dfs: Sequence[int], levels: Sequence[float | None] | None = None
) -> Prior | None:
    """limma's ``fitFDist`` (Smyth 2004, section 6.2, equal weights): the prior matching the mean and
    variance of log s² after removing what sampling with df degrees of freedom explains. Rows with
    a zero variance carry no scale and are left out; None with fewer than ``MIN_ROWS`` left.

    With ``levels`` (each row's log time; all given), the prior's scale follows them, as limma-trend's
    does (Law et al. 2014): the mean of log s² is a running mean over the ``TREND_WINDOW`` share of
    rows nearest in level, and the variance around it gives the degrees of freedom. Rows of an A/B
    job differ in noise with their time by design (a 20 ms configuration gets a pass or two a round,
    a 20 us one hundreds), so one scale for all is a prior of almost no weight (0.6 degrees of
    freedom, measured here) that cannot steady a row's six rounds."""
    rows = [
        (v, d, level)
        for v, d, level in zip(variances, dfs, levels or [None] * len(variances), strict=True)
        if d > 0 and v > 0
    ]
    if len(rows) < MIN_ROWS:
        return None
    trended = levels is not None and all(level is not None for _, _, level in rows)
    if trended:
        rows.sort(key=lambda row: cast(float, row[2]))
    e = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v, d, _ in rows]
    centres = (
        running_means(e, max(MIN_ROWS, round(TREND_WINDOW * len(e))))
        if trended
        else [statistics.fmean(e)] * len(e)
    )
    residuals = [x - c for x, c in zip(e, centres, strict=True)]
    excess = statistics.fmean(r * r for r in residuals) * len(e) / (len(e) - 1) - statistics.fmean(
        trigamma(d / 2) for _, d, _ in rows
    )
    d0 = 2 * trigamma_inverse(excess) if excess > 0 else math.inf
    shift = 0.0 if math.isinf(d0) else digamma(d0 / 2) - math.log(d0 / 2)
    scales = [math.exp(c + shift) for c in centres]
    source = "run-to-run variances"
    if not trended:
        return Prior(s2=scales[0], df=d0, source=source)
    trend = tuple((cast(float, level), scale) for (_, _, level), scale in zip(rows, scales, strict=True))
    return Prior(s2=statistics.median(scales), df=d0, source=f"{source}, by level", trend=trend)


TREND_WINDOW = 0.1
"""The share of rows, nearest in level, whose mean log variance is a trended prior's scale."""


def running_means(values: Sequence[float], window: int) -> list[float]:
    """Each value's mean with its neighbours: the ``window`` values centred on it (shifted inwards
    at the ends, the whole sequence when shorter)."""
    n = len(values)
    window = min(window, n)
    prefix = [0.0, *itertools.accumulate(values)]
    means = []
    for i in range(n):
        start = min(max(0, i - window // 2), n - window)
        means.append((prefix[start + window] - prefix[start]) / window)
    return means


def fit_ratio_null(residuals: Sequence[float], normal: bool = False) -> Prior | None:
    """The scaled t that centred log ratios follow when nothing changed: df from the ratio of the
    75% to the 50% quantile of |residual| (2.41 for a Cauchy, 1.71 for a normal), the scale from the
    50% quantile. Both come from the central three quarters, as Efron's central matching does: the
    rows that did change sit in the tails, and a tail quantile would count them as noise (a diff
    with a tenth of its rows slowed would otherwise widen its own null until nothing is called).
    Residuals of exactly zero (medians quantised by the timer's resolution, or files copied) are
    left out, which widens the null; None with fewer than ``MIN_ROWS`` left.

    ``normal``: the residuals are paired rounds' log ratios, whose sides shared the machine's
    stretches turn by turn, so what remains is the rows' own noise; a tail weight read from a few
    dozen rows is then mostly the changed rows, so the null is the normal of the same scale."""
    sizes = [abs(r) for r in residuals if r != 0]
    if len(sizes) < MIN_ROWS:
        return None
    half, tail = quantile(sizes, 0.5), quantile(sizes, TAIL_QUANTILE)
    df = math.inf if normal else _df_for_tail_ratio(tail / half)
    scale = half / t_ppf(0.75, df)
    return Prior(s2=scale * scale, df=df, source="log ratios across the diff")


def _tail_ratio(df: float) -> float:
    """The ratio of the ``TAIL_QUANTILE`` to the median of |T| for a t with ``df``."""
    return t_ppf(0.5 + TAIL_QUANTILE / 2, df) / t_ppf(0.75, df)


def _df_for_tail_ratio(ratio: float) -> float:
    """The degrees of freedom whose t has this ratio of |T| quantiles (bisection in log df;
    the ratio falls monotonically with df)."""
    low, high = _DF_RANGE
    if ratio >= _tail_ratio(low):
        return low
    if ratio <= _tail_ratio(high):
        return math.inf
    for _ in range(60):
        middle = math.sqrt(low * high)
        if _tail_ratio(middle) > ratio:
            low = middle
        else:
            high = middle
    return math.sqrt(low * high)


def noise_model(contrasts: Sequence[Contrast], paired: bool = False) -> NoiseModel:
    """The diff's centre, empirical null and variance prior (None where too few rows), and the null
    of the standardisable rows' scores (``standardised``; ``Contrast.standardisable``); ``paired``:
    the contrasts are paired rounds of an interleaved A/B job, whose raw null is a normal."""
    rows = len(contrasts)
    centre = statistics.median(c.estimate for c in contrasts) if rows >= MIN_ROWS and not paired else 0.0
    levels = [c.level for c in contrasts]
    prior = fit_variance_prior(
        [c.variance or 0.0 for c in contrasts],
        [c.df for c in contrasts],
        levels if all(level is not None for level in levels) else None,
    )
    scores = [z_score(c, centre, prior) for c in contrasts if c.standardisable and not c.from_rounds]
    return NoiseModel(
        centre=centre,
        null=fit_ratio_null([c.estimate - centre for c in contrasts], normal=paired),
        prior=prior,
        rows=rows,
        standardised=fit_ratio_null([z for z in scores if z is not None], normal=True),
        rounds=fit_round_null(contrasts, prior) if paired else None,
    )


def fit_round_null(contrasts: Sequence[Contrast], prior: Prior | None) -> Prior | None:
    """The null of one round's log ratio in units of its expected noise (``round_scale``): a scaled
    t fitted, as ``fit_ratio_null`` fits one, to every round's residual around its row's estimate,
    in those units (times sqrt(m / (m - 1)) for a row of m rounds, what taking its mean out leaves).
    A change moves all of a row's rounds alike, so their residuals are noise whatever changed, and
    the fit holds when most rows did change (a job of the operators a change touched). None without
    a prior or with fewer than ``MIN_ROWS`` residuals."""
    if prior is None:
        return None
    residuals = [
        (y - c.estimate) / round_scale(prior, c, noise) * math.sqrt(len(c.rounds) / (len(c.rounds) - 1))
        for c in contrasts
        if len(c.rounds) >= 2
        for y, noise in zip(c.rounds, c.round_noise, strict=True)
    ]
    return fit_ratio_null(residuals)


def round_scale(prior: Prior, contrast: Contrast, noise: float) -> float:
    """A round's expected noise in log units: the machine's round-to-round variance at the row's
    level (the prior's scale) plus the round's own (``noise``, from its passes)."""
    return math.sqrt(prior.scale_at(contrast.level) + noise)


def z_score(contrast: Contrast, centre: float, prior: Prior | None) -> float | None:
    """The row's centred moderated t as the standard normal score with the same tail probability;
    None without replicates. Rows of an interleaved A/B job differ in their own noise by design (a
    20 ms configuration gets one or two passes a round, a 20 us one hundreds), so one null scale
    of the raw log ratios, fitted to all rows, is too wide for the precise rows and too narrow for
    the noisy ones; fitted to these scores (Efron's empirical null on z-values), it is the factor
    by which the moderated t's own scale understates the rows' noise (rounds not independent, a
    prior too narrow), and it scales each row's own standard error."""
    own = moderated(contrast, prior)
    if own is None:
        return None
    se, df = own
    t = (contrast.estimate - centre) / se
    tail = max(t_sf(abs(t), df), 1e-300)
    return math.copysign(-normal_ppf(tail), t) if tail < 0.5 else 0.0


def moderated(contrast: Contrast, prior: Prior | None) -> tuple[float, float] | None:
    """The row's moderated standard error and degrees of freedom; None when it has no replicates
    (a prior alone says nothing the empirical null does not) or a zero variance and no prior."""
    if contrast.variance is None or contrast.df == 0:
        return None
    observed = contrast.variance
    if prior is None:
        # No prior to moderate by (a comparison of a few rows): rounds that agree exactly (a quantising
        # timer) have no spread to weigh, and what each round measured within itself stands in. (As a
        # floor under every row it cost 8 of 56 found 10% changes: a round's median interval from a
        # few passes is wider than the rounds' agreement.)
        observed = observed or (statistics.fmean(contrast.round_noise) if contrast.round_noise else 0.0)
        variance, df = observed, float(contrast.df)
    elif math.isinf(prior.df):
        variance, df = prior.scale_at(contrast.level), math.inf
    else:
        df = prior.df + contrast.df
        variance = (prior.df * prior.scale_at(contrast.level) + contrast.df * observed) / df
    se = math.sqrt(variance) * contrast.unscaled
    return (se, df) if se > 0 else None


def test(contrast: Contrast, model: NoiseModel) -> RowTest | None:
    """The row's test; None when it cannot be tested. A paired row: its own rounds (``_paired_test``).
    A row of separate sweeps: its own moderated variance and an empirical null, each where
    available, combined as an intersection-union test; the null of a row of three sweeps a side and
    more is the standardised one (its own standard error times the scores' null scale), else the
    null of the raw log ratios."""
    own = moderated(contrast, model.prior)
    if contrast.from_rounds:  # paired rounds: the row's own rounds are its evidence, or there is none
        return _paired_test(contrast, own, model) if own is not None else None
    candidates = []
    if own is not None:
        candidates.append(own)
    if own is not None and contrast.standardisable and model.standardised is not None:
        candidates.append((own[0] * math.sqrt(model.standardised.s2), math.inf))
    elif model.null is not None:
        candidates.append((math.sqrt(model.null.s2), model.null.df))
    return _row_test(contrast, model.centre, candidates) if candidates else None


def _row_test(contrast: Contrast, centre: float, candidates: Sequence[tuple[float, float]]) -> RowTest:
    """The intersection-union test of ``contrast`` against each candidate (standard error, degrees of
    freedom): the largest p decides, and the interval is the hull of the candidates' intervals."""
    centred = contrast.estimate - centre
    p, deciding_se = max((2 * t_sf(abs(centred) / se, df), se) for se, df in candidates)
    half = _half_width(candidates, CONFIDENCE)
    return RowTest(
        statistic=centred / deciding_se,
        se=max(se for se, _ in candidates),
        p=min(1.0, p),
        low=contrast.estimate - half,
        high=contrast.estimate + half,
        equivalence=_half_width(candidates, EQUIVALENCE_CONFIDENCE),
    )


CONSISTENCY_SHARE = 0.1
"""The share of the level a paired row's test spends on its rounds' consistency (``consistency``),
the rest on its rounds' mean: a weighted Bonferroni combination, p = min(p_mean / 0.9,
p_consistency / 0.1), keeps the level whatever the two tests' dependence."""


def consistency(contrast: Contrast, model: NoiseModel) -> tuple[float, float, float, float] | None:
    """Whether every round of a paired row saw the same change, each against an unchanged row's
    round: the p of an intersection-union test (Berger 1982: it rejects when every round alone
    rejects, so its level holds however the rounds depend on each other), the smallest change any
    round saw, and the hull of the rounds' own 95% intervals (log units). A round's null is the
    rounds' null (``fit_round_null``) in units of its expected noise (``round_scale``).

    This is what the rounds' mean and spread cannot say when a change's size varies from round to
    round: two rounds 100x and 900x slower have a spread that puts their mean's interval around 1,
    yet no unchanged row's round comes near either. None with fewer than two rounds, rounds that
    disagree in direction, or no rounds' null."""
    null, prior = model.rounds, model.prior
    if null is None or prior is None or len(contrast.rounds) < 2:
        return None
    if len({math.copysign(1.0, y) for y in contrast.rounds}) > 1 or 0.0 in contrast.rounds:
        return None
    scales = [round_scale(prior, contrast, noise) * math.sqrt(null.s2) for noise in contrast.round_noise]
    pairs = list(zip(contrast.rounds, scales, strict=True))
    p = 2 * max(t_sf(abs(y) / scale, null.df) for y, scale in pairs)
    quantile = t_ppf(0.5 + CONFIDENCE / 2, null.df)
    low = min(y - quantile * scale for y, scale in pairs)
    high = max(y + quantile * scale for y, scale in pairs)
    return min(1.0, p), min(abs(y) for y in contrast.rounds), low, high


def _paired_test(contrast: Contrast, own: tuple[float, float], model: NoiseModel) -> RowTest:
    """A paired row's test: its rounds' mean against their moderated spread, or every round against
    an unchanged row's noise (``consistency``), whichever decides (``CONSISTENCY_SHARE``). Where
    the rounds decide, the interval is the hull of the rounds' own intervals: the change's size
    varies by more than its mean's interval would say."""
    mean = _row_test(contrast, 0.0, [own])
    mean = replace(mean, p=min(1.0, mean.p / (1 - CONSISTENCY_SHARE)))
    rounds = consistency(contrast, model)
    if rounds is None or rounds[0] / CONSISTENCY_SHARE >= mean.p:
        return mean
    p, smallest, low, high = rounds
    return replace(
        mean, p=min(1.0, p / CONSISTENCY_SHARE), low=low, high=high, every_round=smallest,
        statistic=math.copysign(smallest, contrast.rounds[0]) / own[0],
    )  # fmt: skip


def _half_width(candidates: Sequence[tuple[float, float]], level: float) -> float:
    """The half-width of the hull of the candidate tests' two-sided ``level`` intervals, each
    (standard error, degrees of freedom)."""
    return max(t_ppf(0.5 + level / 2, df) * se for se, df in candidates)


def assess(
    contrasts: Sequence[Contrast], paired: bool = False
) -> tuple[NoiseModel, tuple[RowTest | None, ...]]:
    """Every row's test against the diff's noise; None for a row that cannot be tested."""
    model = noise_model(contrasts, paired)
    return model, tuple(test(c, model) for c in contrasts)


def bh_qvalues(p_values: Sequence[float]) -> tuple[float, ...]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input's order: for the i-th smallest
    of m, the minimum over j >= i of p_(j) · m / j, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    q = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * m / rank)
        q[index] = running
    return tuple(q)
