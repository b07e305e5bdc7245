"""What paired rounds of an A/B job are tested on, by hand: each round's fastest pass, the timer's
tick as a floor under the pair's noise, the empirical null fitted to standardised statistics,
Yuen's trimmed contrast of the rounds, and the variance prior that follows the rows' level."""

from __future__ import annotations

import math
import statistics

import pytest

from opperf.verdicts.diff import Compared, Side, measured_noise
from opperf.verdicts.distributions import t_ppf
from opperf.verdicts.inference import (
    Contrast,
    NoiseModel,
    Prior,
    fit_variance_prior,
    noise_model,
    running_means,
    trimmed,
    z_score,
)
from opperf.verdicts.inference import test as row_test
from opperf.verdicts.load import PhaseRun, phase_run, smallest_gap, timer_tick


def test_a_round_compares_its_fastest_pass_and_knows_its_tick():
    measured = phase_run({"samples_s": [7e-6, 5e-6, 6e-6, 9e-6, 6e-6]}, "test")
    assert measured.median == 6e-6 and measured.fastest == 5e-6 and measured.paired_figure == 5e-6
    assert measured.tick == pytest.approx(1e-6)
    assert PhaseRun(2.0, 1.0, 3.0, False).paired_figure == 2.0  # no fastest: the median
    assert PhaseRun(2.0, 1.0, 3.0, False, fastest=0.0).paired_figure == 2.0  # a zero cannot be a ratio
    assert smallest_gap([3e-6] * 4) is None
    assert smallest_gap([0.25, 1.0, 0.5, 0.25]) == 0.25


def test_a_tick_is_a_gap_every_sample_is_a_whole_number_of():
    """Whole microseconds show MXNet's tick, floating-point rounding included; two passes of a
    slow operator a millisecond apart show none."""
    assert timer_tick([31e-6, 30e-6, 29e-6, 372e-6, 30e-6]) == pytest.approx(1e-6)
    assert timer_tick([31e-6, 30e-6, 29e-6, 372e-6]) is None  # too few samples to show one
    assert timer_tick([0.012345, 0.013565]) is None
    assert timer_tick([0.012345]) is None
    assert timer_tick([546e-6, 585e-6]) is None  # whole numbers of their gap by chance
    assert phase_run({"samples_s": [0.012345, 0.013565, 0.0124]}, "test").tick is None


def _side(paired: tuple[float, ...], precision: float, tick: float | None) -> Side:
    return Side(
        median=paired[0],
        low=paired[0],
        high=paired[0],
        run_medians=paired,
        precision=precision,
        noisy=False,
        imprecise=False,
        busy=False,
        run_paired=paired,
        tick=tick,
    )


def _compared(base: Side, new: Side) -> Compared:
    ratios = [math.log(n / b) for b, n in zip(base.run_paired, new.run_paired, strict=True)]
    return Compared(None, "forward", base, new, Contrast.paired(ratios), None)


def test_the_pairs_measured_noise_is_only_a_tick_of_a_quantising_timer():
    # Paired rounds: the rounds' agreement is the row's precision, so four rounds of a 4% and a 3%
    # round precision on a continuous timer (a 1e-9 s tick against 1 ms) leave only that tick.
    precise = _compared(_side((1e-3,) * 4, 0.04, 1e-9), _side((1e-3,) * 4, 0.03, 1e-9))
    assert measured_noise(precise) == pytest.approx(math.log1p(1.5e-6))  # 1.5 ticks
    # 5 us against 6 us on a 1 us timer: 1.5 ticks over the faster side's 5 us, log1p(30%), which
    # one tick (6/5) stays within and two ticks (7/5) exceed.
    quantised = _compared(_side((5e-6,) * 4, 0.0, 1e-6), _side((6e-6,) * 4, 0.0, 1e-6))
    assert measured_noise(quantised) == pytest.approx(math.log1p(0.3))
    assert math.log(6 / 5) < measured_noise(quantised) < math.log(7 / 5)
    # Separate sweeps keep the sides' resolution: hypot(4%, 3%) = 5%.
    unpaired = Compared(None, "forward", precise.base, precise.new, Contrast.two_sample([0.0], [0.0]), None)
    assert measured_noise(unpaired) == pytest.approx(math.log1p(0.05))
    # and the tick floor too: three sweeps a side of 7 against 6 us, their medians' intervals of
    # zero width, are one tick apart, not 14% faster.
    ticked = Compared(
        None,
        "forward",
        _side((7e-6,) * 3, 0.0, 1e-6),
        _side((6e-6,) * 3, 0.0, 1e-6),
        Contrast.two_sample([math.log(7e-6)] * 3, [math.log(6e-6)] * 3),
        None,
    )
    assert measured_noise(ticked) == pytest.approx(math.log1p(0.25))
    assert measured_noise(ticked) > abs(ticked.contrast.estimate)


def test_z_score_of_a_normal_moderated_statistic_is_the_statistic():
    # A prior with infinite degrees of freedom makes every row's variance 0.0004: se 0.02 / sqrt(3),
    # and the moderated t is a normal, so its score is the statistic itself.
    prior = Prior(s2=0.0004, df=math.inf, source="test")
    contrast = Contrast.paired([0.1, 0.1, 0.1])
    se = 0.02 / math.sqrt(3)
    assert z_score(contrast, 0.0, prior) == pytest.approx(0.1 / se)
    assert z_score(Contrast.paired([-0.1, -0.1, -0.1]), 0.0, prior) == pytest.approx(-0.1 / se)
    assert z_score(Contrast.paired([0.1]), 0.0, prior) is None  # one round: no replicates


def test_the_standardised_null_scales_each_rows_own_standard_error():
    # By hand: own se 0.02/sqrt(3), statistic 8.66; a standardised null of scale 2 makes the
    # null test a normal with se 2 x 0.02/sqrt(3): p = erfc(8.66 / 2 / sqrt(2)).
    prior = Prior(s2=0.0004, df=math.inf, source="test")
    model = NoiseModel(centre=0.0, null=None, prior=prior, rows=40, standardised=Prior(4.0, math.inf, "z"))
    row = row_test(Contrast.paired([0.1, 0.1, 0.1]), model)
    se = 0.02 / math.sqrt(3)
    assert row.se == pytest.approx(2 * se)
    assert row.p == pytest.approx(math.erfc(0.1 / (2 * se) / math.sqrt(2)))
    # A scale below 1 never loosens the test: the moderated t, the larger p, decides.
    calm = row_test(
        Contrast.paired([0.1, 0.1, 0.1]), NoiseModel(0.0, None, prior, 40, Prior(0.25, math.inf, "z"))
    )
    assert calm.p == pytest.approx(math.erfc(0.1 / se / math.sqrt(2)))


def test_rows_of_different_noise_give_a_standardised_null_near_one():
    """Rows 10x apart in their own noise, each row's rounds spread as its own noise says: the raw
    null's scale sits between the two kinds, while the scores' null is about 1."""
    contrasts = []
    for index in range(60):
        sd = 0.01 if index % 2 else 0.1
        offsets = (-1.2, -0.4, 0.4, 1.2)
        shift = sd * ((index % 7) - 3) / 6
        contrasts.append(Contrast.paired([shift + sd * o for o in offsets]))
    model = noise_model(contrasts, paired=True)
    assert model.standardised is not None
    assert 0.5 < math.sqrt(model.standardised.s2) < 1.5
    # Separate sweeps: scores only for rows of three runs a side or more.
    pairs = [Contrast.two_sample([0.01 * i, 0.0], [0.01 * i, 0.02]) for i in range(30)]
    assert noise_model(pairs).standardised is None
    triples = [Contrast.two_sample([0.0, 0.01, 0.02], [0.001 * i, 0.01, 0.03]) for i in range(30)]
    assert all(c.standardisable for c in triples) and noise_model(triples).standardised is not None


def test_paired_rows_with_replicates_are_not_held_to_the_raw_null():
    """The raw log ratios' null (here a 50% scale, as rows of very different noise would give) is
    not the null of a paired row with replicates: the standardised null (scale 1) and the
    moderated t decide, so p is the t's. A paired row without replicates keeps the raw null."""
    prior = Prior(s2=0.0004, df=math.inf, source="test")
    model = NoiseModel(0.0, Prior(0.25, math.inf, "raw"), prior, 40, Prior(1.0, math.inf, "z"))
    se = 0.02 / math.sqrt(3)
    row = row_test(Contrast.paired([0.1, 0.1, 0.1]), model)
    assert row.p == pytest.approx(math.erfc(0.1 / se / math.sqrt(2)))
    single = row_test(Contrast.paired([0.1]), model)
    assert single.p == pytest.approx(math.erfc(0.1 / 0.5 / math.sqrt(2)))


def test_trimmed_statistics_by_hand():
    """Six rounds lose one value at each end (g = floor(0.2 * 6) = 1): the mean of the middle four;
    the winsorised sample (each cut value replaced by its nearest kept one) has the variance
    computed here by hand, over (1 - 2/6)^2; 6 - 2 - 1 = 3 degrees of freedom."""
    estimate, variance, df = trimmed([0.10, -0.40, 0.12, 0.08, 0.11, 0.09])
    assert estimate == pytest.approx((0.08 + 0.09 + 0.10 + 0.11) / 4)
    winsorised = [0.08, 0.08, 0.09, 0.10, 0.11, 0.11]
    mean = sum(winsorised) / 6
    by_hand = sum((w - mean) ** 2 for w in winsorised) / 5 / (4 / 6) ** 2
    assert variance == pytest.approx(by_hand) and df == 3
    # Four rounds trim nothing (g = 0): the mean and the sample variance, n - 1 degrees of freedom.
    assert trimmed([0.1, 0.2, 0.3, 0.4]) == (pytest.approx(0.25), pytest.approx(0.05 / 3), 3)
    assert trimmed([0.3]) == (0.3, None, 0)


def test_one_outlying_round_does_not_hide_a_ten_percent_change():
    """A row whose five rounds agree on a 10% slowdown within 1% and whose sixth went the other way
    by 40% (another process in that round): its trimmed contrast keeps the change and a standard
    error near the five's, where the plain mean and variance would put zero inside the interval."""
    ratios = [0.10, 0.11, 0.09, 0.10, 0.095, -0.40]
    contrast = Contrast.paired(ratios)
    assert contrast.estimate == pytest.approx((0.09 + 0.095 + 0.10 + 0.10) / 4)  # -0.40 and 0.11 cut
    se = math.sqrt(contrast.variance) * contrast.unscaled
    assert contrast.estimate / se > t_ppf(0.999, contrast.df)  # significant at 0.2%, two-sided
    plain_se = statistics.stdev(ratios) / math.sqrt(len(ratios))
    assert statistics.fmean(ratios) / plain_se < t_ppf(0.975, len(ratios) - 1)  # not even at 5%


def test_running_means_by_hand():
    assert running_means([1.0, 2.0, 3.0, 4.0, 10.0], 3) == pytest.approx([2.0, 2.0, 3.0, 17 / 3, 17 / 3])
    assert running_means([1.0, 3.0], 5) == [2.0, 2.0]  # shorter than the window: the whole mean


def test_a_trended_prior_follows_the_rows_level():
    """Rows at 20 levels, half of them (the faster) with variance 1e-4, the slower with 1e-2, two
    rows per level at each of 1/2 and 2 times it: the flat prior has one scale between the two,
    the trended one each group's scale at its levels (ends of the running mean), interpolated
    linearly between knots, flat beyond the ends."""
    variances, levels = [], []
    for index in range(40):
        level = float(index // 2)
        typical = 1e-4 if level < 10 else 1e-2
        variances.append(typical * (0.5 if index % 2 else 2.0))
        levels.append(level)
    dfs = [5] * 40
    flat = fit_variance_prior(variances, dfs)
    trended = fit_variance_prior(variances, dfs, levels)
    assert flat is not None and trended is not None and trended.trend
    assert 1e-4 < flat.s2 < 1e-2
    assert trended.scale_at(0.0) == pytest.approx(trended.trend[0][1])
    assert trended.scale_at(-5.0) == trended.scale_at(0.0) and trended.scale_at(50.0) == trended.scale_at(
        19.0
    )
    assert trended.scale_at(0.0) < 3e-4 and trended.scale_at(19.0) > 3e-3
    assert trended.df > flat.df  # the trend explains most of the spread of log variances
    (x0, y0), (x1, y1) = trended.trend[0], trended.trend[2]
    assert Prior(1.0, 4.0, "knots", ((0.0, 1.0), (2.0, 3.0))).scale_at(0.5) == pytest.approx(1.5)
    assert Prior(1.0, 4.0, "flat").scale_at(7.0) == 1.0
    assert (x0, x1) == (0.0, 1.0) and y0 == pytest.approx(y1)  # one running mean over the end rows
