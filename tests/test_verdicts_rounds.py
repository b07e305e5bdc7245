"""What paired rounds of an A/B job are tested on, by hand: each round's fastest pass, the timer's
tick as a floor under the pair's noise, and the empirical null fitted to standardised statistics."""

from __future__ import annotations

import math

import pytest

from opperf.verdicts.diff import Compared, Side, measured_noise
from opperf.verdicts.inference import Contrast, NoiseModel, Prior, noise_model, z_score
from opperf.verdicts.inference import test as row_test
from opperf.verdicts.load import PhaseRun, phase_run, smallest_gap


def test_a_round_compares_its_fastest_pass_and_knows_its_tick():
    measured = phase_run({"samples_s": [7e-6, 5e-6, 6e-6, 9e-6, 6e-6]}, "test")
    assert measured.median == 6e-6 and measured.fastest == 5e-6 and measured.paired_figure == 5e-6
    assert measured.tick == pytest.approx(1e-6)
    assert PhaseRun(2.0, 1.0, 3.0, False).paired_figure == 2.0  # no fastest: the median
    assert PhaseRun(2.0, 1.0, 3.0, False, fastest=0.0).paired_figure == 2.0  # a zero cannot be a ratio
    assert smallest_gap([3e-6] * 4) is None
    assert smallest_gap([0.25, 1.0, 0.5, 0.25]) == 0.25


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


def test_the_pairs_measured_noise_is_a_rounds_over_sqrt_rounds_and_never_below_a_tick():
    # Four rounds of a 4% and a 3% round precision: log1p(5%) / sqrt(4); a continuous timer's tick
    # (1e-9 s against 1 ms) is far below.
    precise = _compared(_side((1e-3,) * 4, 0.04, 1e-9), _side((1e-3,) * 4, 0.03, 1e-9))
    assert measured_noise(precise) == pytest.approx(math.log1p(0.05) / 2)
    # 5 us against 6 us on a 1 us timer: one tick over the faster side's 5 us, log1p(20%).
    quantised = _compared(_side((5e-6,) * 4, 0.0, 1e-6), _side((6e-6,) * 4, 0.0, 1e-6))
    assert measured_noise(quantised) == pytest.approx(math.log1p(0.2))
    # Separate sweeps keep the sides' resolution as it is.
    unpaired = Compared(None, "forward", precise.base, precise.new, Contrast.two_sample([0.0], [0.0]), None)
    assert measured_noise(unpaired) == pytest.approx(math.log1p(0.05))


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
    assert noise_model(contrasts).standardised is None  # separate sweeps: no scores


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
