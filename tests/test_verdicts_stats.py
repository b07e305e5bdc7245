"""The statistics behind verdicts, against hand-computed and tabulated values."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from opperf.verdicts.decide import Verdict, resolution, status_verdict, timing_verdict
from opperf.verdicts.distributions import (
    digamma,
    incomplete_beta,
    normal_ppf,
    t_ppf,
    t_sf,
    trigamma,
    trigamma_inverse,
)
from opperf.verdicts.inference import (
    MIN_ROWS,
    Contrast,
    NoiseModel,
    Prior,
    RowTest,
    assess,
    bh_qvalues,
    fit_ratio_null,
    fit_variance_prior,
    moderated,
    trimmed_slow,
)
from opperf.verdicts.inference import test as inference_test

EULER = 0.5772156649015329


def test_distributions_match_tabulated_values():
    assert normal_ppf(0.975) == pytest.approx(1.959963984540054, abs=1e-12)
    assert normal_ppf(1e-10) == pytest.approx(-6.361340902404056, abs=1e-9)
    assert t_ppf(0.975, 1) == pytest.approx(12.706204736, abs=1e-6)
    assert t_ppf(0.975, 2) == pytest.approx(4.302652730, abs=1e-6)
    assert t_ppf(0.95, 3) == pytest.approx(2.353363435, abs=1e-6)
    assert t_ppf(0.025, 10) == pytest.approx(-2.228138852, abs=1e-6)
    assert t_sf(2.0, 5) == pytest.approx(0.050969739, abs=1e-8)
    assert t_sf(1.0, 1) == pytest.approx(0.25, abs=1e-12)  # Cauchy: atan(1)/pi from the top
    assert t_sf(3.0, math.inf) == pytest.approx(0.001349898, abs=1e-9)
    assert incomplete_beta(0.5, 2, 3) == pytest.approx(11 / 16, abs=1e-12)


def test_digamma_trigamma_and_inverse():
    assert digamma(1) == pytest.approx(-EULER, abs=1e-12)
    assert digamma(0.5) == pytest.approx(-EULER - 2 * math.log(2), abs=1e-12)
    assert trigamma(1) == pytest.approx(math.pi**2 / 6, abs=1e-12)
    assert trigamma(0.5) == pytest.approx(math.pi**2 / 2, abs=1e-12)
    for y in (0.01, 0.3, 1.0, 8.0, 500.0):
        assert trigamma(trigamma_inverse(y)) == pytest.approx(y, rel=1e-7)


def test_bh_qvalues_by_hand():
    # sorted p: 0.01, 0.03, 0.04, 0.20; p*m/rank: 0.04, 0.06, 0.0533, 0.20; running minimum from the top
    q = bh_qvalues([0.01, 0.04, 0.03, 0.20])
    assert q == pytest.approx((0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.20))
    assert bh_qvalues([0.5, 0.9]) == pytest.approx((0.9, 0.9))
    assert bh_qvalues([]) == ()


def test_two_sample_and_paired_contrasts_by_hand():
    c = Contrast.two_sample([0.0, 0.02], [0.40, 0.44])
    assert c.estimate == pytest.approx(0.41)
    assert c.variance == pytest.approx((2 * 0.01**2 + 2 * 0.02**2) / 2)
    assert (c.df, c.unscaled) == (2, 1.0)
    single = Contrast.two_sample([0.1], [0.3])
    assert (single.variance, single.df) == (None, 0)
    assert single.unscaled == pytest.approx(math.sqrt(2))
    # Three runs a side: each side's slowest run is trimmed. Base keeps 0.0, 0.02 (winsorised 0.0,
    # 0.02, 0.02: variance 0.02² / 3, over (2/3)²); new keeps 0.40, 0.44 (0.40, 0.44, 0.44: 0.04² / 3).
    c = Contrast.two_sample([0.3, 0.0, 0.02], [0.40, 0.44, 0.9])
    assert c.estimate == pytest.approx(0.41)
    assert (c.df, c.fewest_runs) == (2, 3)
    assert c.variance == pytest.approx((0.02**2 / 3 + 0.04**2 / 3) / 2 * 9 / 4)
    assert c.unscaled == pytest.approx(math.sqrt(2 / 3))
    assert trimmed_slow([0.1, 0.2, 0.3, 0.4, 5.0]) == (pytest.approx(0.25), pytest.approx(0.017 / 0.64), 3)
    paired = Contrast.paired([0.1, 0.2, 0.3])
    assert (paired.estimate, paired.df) == (pytest.approx(0.2), 2)
    assert paired.variance == pytest.approx(0.01)
    assert paired.unscaled == pytest.approx(math.sqrt(1 / 3))


def test_variance_prior_and_moderation_by_hand():
    # Equal variances: no excess spread, so an infinite-df prior at the bias-corrected mean of log s²
    # (E log s² for df 2 is log σ² + digamma(1) - log(1) = log σ² - Euler gamma).
    prior = fit_variance_prior([0.01] * MIN_ROWS, [2] * MIN_ROWS)
    assert prior.df == math.inf
    assert prior.s2 == pytest.approx(0.01 * math.exp(EULER))
    assert fit_variance_prior([0.01] * (MIN_ROWS - 1), [2] * (MIN_ROWS - 1)) is None
    spread = fit_variance_prior([0.001 * 3**i for i in range(MIN_ROWS)], [2] * MIN_ROWS)
    assert 0 < spread.df < math.inf
    # limma's moderated variance: (d0 s0² + df s²) / (d0 + df)
    se, df = moderated(Contrast(0.3, 0.04, 2, 1.0), Prior(s2=0.01, df=4, source="test"))
    assert df == 6
    assert se == pytest.approx(math.sqrt((4 * 0.01 + 2 * 0.04) / 6))
    assert moderated(Contrast(0.3, None, 0, 1.0), Prior(s2=0.01, df=4, source="test")) is None


def _shaped(quantile_function, scale: float, n: int = 200) -> list[float]:
    return [scale * quantile_function((i + 0.5) / n) for i in range(n)]


def test_empirical_null_scale_and_tails():
    normal = fit_ratio_null(_shaped(normal_ppf, 0.1))
    assert normal.df > 30
    assert math.sqrt(normal.s2) == pytest.approx(0.1, rel=0.05)
    cauchy = fit_ratio_null(_shaped(lambda u: math.tan(math.pi * (u - 0.5)), 0.05))
    assert cauchy.df == pytest.approx(1.0, rel=0.1)
    assert math.sqrt(cauchy.s2) == pytest.approx(0.05, rel=0.05)
    assert fit_ratio_null([0.0] * 50 + [0.1] * 5) is None  # exact zeros carry no scale


def test_assess_finds_the_changed_row_among_unchanged_ones():
    # Unchanged rows: log ratios spread like a normal with sd 0.02 around a machine factor of 1.1;
    # one row moved by 2x beyond it.
    noise = _shaped(normal_ppf, 0.02, n=60)
    contrasts = [Contrast.two_sample([0.0], [math.log(1.1) + e]) for e in noise]
    contrasts.append(Contrast.two_sample([0.0], [math.log(2.2)]))
    model, tests = assess(contrasts)
    assert math.exp(model.centre) == pytest.approx(1.1, rel=0.01)
    q = bh_qvalues([t.p for t in tests])
    assert q[-1] < 1e-6
    assert sum(value < 0.05 for value in q[:-1]) == 0


def test_too_few_rows_give_no_test_without_replicates():
    model, tests = assess([Contrast.two_sample([0.0], [0.5])] * 5)
    assert model.null is None and model.centre == 0.0
    assert tests == (None,) * 5


def _test(low: float, high: float, statistic: float = 5.0, se: float = 0.01) -> RowTest:
    """A test whose 90% interval is the 95% one narrowed as for a normal statistic (1.645 / 1.96)."""
    equivalence = (high - low) / 2 * 1.6449 / 1.96
    return RowTest(statistic=statistic, se=se, p=0.001, low=low, high=high, equivalence=equivalence)


def test_same_is_two_one_sided_tests_at_five_percent():
    """log ratio 0.03 with a standard error of 0.01 (normal): the 95% interval reaches 0.0496, past
    the band's 0.0488, but the 90% one (0.0465) does not, so both one-sided tests at 5% reject a
    change of 5% or more: ``same``. A standard error of 0.012 puts the 90% interval at 0.0497."""
    band = math.log1p(0.05)
    model = NoiseModel(centre=0.0, null=None, prior=Prior(s2=0.01**2, df=math.inf, source="hand"), rows=100)
    row = inference_test(Contrast(estimate=0.03, variance=0.01**2, df=2, unscaled=1.0), model)
    assert row is not None
    assert row.high == pytest.approx(0.03 + 1.959964 * 0.01) and row.high > band
    assert row.equivalence == pytest.approx(1.644854 * 0.01)
    assert timing_verdict(0.03, row, q=0.01, row_noise=0.0, threshold=0.05, alpha=0.05)[0] is Verdict.SAME
    wider = replace(row, equivalence=1.644854 * 0.012)
    assert timing_verdict(0.03, wider, q=0.01, row_noise=0.0, threshold=0.05, alpha=0.05)[0] is (
        Verdict.INCONCLUSIVE
    )


def test_decision_rule_on_constructed_inputs():
    band = math.log1p(0.05)
    slower = timing_verdict(
        math.log(1.5), _test(0.3, 0.5), q=0.01, row_noise=0.02, threshold=0.05, alpha=0.05
    )
    assert slower == (Verdict.SLOWER, None)
    faster = timing_verdict(
        math.log(0.6), _test(-0.6, -0.4, statistic=-9), q=0.01, row_noise=0.02, threshold=0.05, alpha=0.05
    )
    assert faster[0] is Verdict.FASTER
    # (c): not surviving FDR control
    assert timing_verdict(0.4, _test(0.3, 0.5), q=0.2, row_noise=0.02, threshold=0.05, alpha=0.05)[0] is (
        Verdict.INCONCLUSIVE
    )
    # (a): beyond the threshold but within the pair's own noise
    assert timing_verdict(0.1, _test(0.05, 0.15), q=0.01, row_noise=0.2, threshold=0.05, alpha=0.05)[0] is (
        Verdict.INCONCLUSIVE
    )
    # (b): the centred statistic points the other way (the whole side moved more)
    assert (
        timing_verdict(
            0.1, _test(0.05, 0.15, statistic=-4), q=0.01, row_noise=0.0, threshold=0.05, alpha=0.05
        )[0]
        is Verdict.INCONCLUSIVE
    )
    same = timing_verdict(0.01, _test(-band / 2, band / 2), q=0.9, row_noise=0.01, threshold=0.05, alpha=0.05)
    assert same == (Verdict.SAME, None)
    wide = timing_verdict(0.01, _test(-0.3, 0.3), q=0.9, row_noise=0.01, threshold=0.05, alpha=0.05)
    assert wide[0] is Verdict.INCONCLUSIVE
    assert timing_verdict(0.5, None, None, 0.0, 0.05, 0.05)[0] is Verdict.INCONCLUSIVE


def test_status_transitions_and_resolution():
    assert status_verdict("ok", "crashed") is Verdict.NEWLY_FAILING
    assert status_verdict("timeout", "ok") is Verdict.FIXED
    assert status_verdict("ok", None) is Verdict.GONE
    assert status_verdict("skipped", "ok") is Verdict.NEW
    assert status_verdict("ok", "ok") is None
    assert status_verdict("failed", "failed") is None
    assert resolution(0.03, 0.04) == pytest.approx(math.log1p(0.05))


def test_noise_model_is_a_value():
    model = NoiseModel(centre=0.0, null=None, prior=None, rows=0)
    with pytest.raises(AttributeError):
        model.centre = 1.0  # type: ignore[misc]
