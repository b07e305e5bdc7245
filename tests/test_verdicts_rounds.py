"""What paired rounds of an A/B job are tested on, by hand: each round's fastest pass, the timer's
tick as a floor under the pair's noise, the empirical null fitted to standardised statistics,
Yuen's trimmed contrast of the rounds, and the variance prior that follows the rows' level."""

from __future__ import annotations

import math
import statistics

import pytest

from opperf.results.record import Phase, phase_of, smallest_gap, timer_tick
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


def test_a_round_compares_its_fastest_pass_and_knows_its_tick():
    measured = phase_of({"samples_s": [7e-6, 5e-6, 6e-6, 9e-6, 6e-6]}, "test")
    assert measured.median == 6e-6 and measured.fastest == 5e-6 and measured.paired_figure == 5e-6
    assert measured.tick == pytest.approx(1e-6)
    assert Phase(2.0, 1.0, 3.0, False).paired_figure == 2.0  # no fastest: the median
    assert Phase(2.0, 1.0, 3.0, False, fastest=0.0).paired_figure == 2.0  # a zero cannot be a ratio
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
    assert phase_of({"samples_s": [0.012345, 0.013565, 0.0124]}, "test").tick is None


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


def _three_runs_a_side(estimate: float, variance: float) -> Contrast:
    """A row of three separate sweeps a side: standardisable, with se sqrt(variance) / sqrt(3)."""
    return Contrast(estimate=estimate, variance=variance, df=4, unscaled=1 / math.sqrt(3), fewest_runs=3)


def test_the_standardised_null_scales_each_rows_own_standard_error():
    # By hand: own se 0.02/sqrt(3), statistic 8.66; a standardised null of scale 2 makes the
    # null test a normal with se 2 x 0.02/sqrt(3): p = erfc(8.66 / 2 / sqrt(2)).
    prior = Prior(s2=0.0004, df=math.inf, source="test")
    model = NoiseModel(centre=0.0, null=None, prior=prior, rows=40, standardised=Prior(4.0, math.inf, "z"))
    row = row_test(_three_runs_a_side(0.1, 0.0004), model)
    se = 0.02 / math.sqrt(3)
    assert row.se == pytest.approx(2 * se)
    assert row.p == pytest.approx(math.erfc(0.1 / (2 * se) / math.sqrt(2)))
    # A scale below 1 never loosens the test: the moderated t, the larger p, decides.
    calm = row_test(
        _three_runs_a_side(0.1, 0.0004), NoiseModel(0.0, None, prior, 40, Prior(0.25, math.inf, "z"))
    )
    assert calm.p == pytest.approx(math.erfc(0.1 / se / math.sqrt(2)))


def test_rows_of_different_noise_give_a_standardised_null_near_one():
    """Rows of three sweeps a side 10x apart in their own noise, each row's estimate as far from
    zero as its own noise says: the scores' null is about 1. Paired rounds fit none: their rows are
    tested on their own rounds alone."""
    contrasts = []
    for index in range(60):
        variance = 1e-4 if index % 2 else 1e-2
        shift = math.sqrt(variance / 3) * ((index % 7) - 3) / 2
        contrasts.append(_three_runs_a_side(shift, variance))
    model = noise_model(contrasts)
    assert model.standardised is not None
    assert 0.5 < math.sqrt(model.standardised.s2) < 1.5
    pairs = [Contrast.two_sample([0.01 * i, 0.0], [0.01 * i, 0.02]) for i in range(30)]
    assert noise_model(pairs).standardised is None  # two runs a side: not standardisable
    rounds = [Contrast.paired([0.01 * i, 0.0, 0.02]) for i in range(30)]
    assert noise_model(rounds, paired=True).standardised is None


def test_a_paired_row_is_tested_on_its_own_rounds_alone():
    """The raw log ratios' null (a 50% scale, as a job whose rows mostly changed gives) and a
    standardised null are not a paired row's: its own moderated t decides, p and interval. A paired
    row of one round has no replicate, and is not tested (a job stopped after its first round)."""
    prior = Prior(s2=0.0004, df=math.inf, source="test")
    model = NoiseModel(0.0, Prior(0.25, math.inf, "raw"), prior, 40, Prior(4.0, math.inf, "z"))
    se = 0.02 / math.sqrt(3)
    row = row_test(Contrast.paired([0.1, 0.1, 0.1]), model)
    assert row.p == pytest.approx(math.erfc(0.1 / se / math.sqrt(2)))
    assert row.high - row.low == pytest.approx(2 * 1.959964 * se, rel=1e-4)
    assert row_test(Contrast.paired([0.1]), model) is None


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


SPREAD = (1.0, 1.013, 1.027, 1.004, 1.019)
"""A round's passes around its fastest: a continuous timer's readings."""


def _record(size: int, side: str, index: int, samples: list[float]) -> dict[str, object]:
    """Round ``index`` of an ``exp`` row (by size) on one side: its forward passes in seconds."""
    return {
        "framework": "mxnet", "namespace": "mx.nd", "op": "exp", "category": "unary",
        "inputs": {"data": {"shape": [size]}}, "status": "ok", "reason": None,
        "forward": {"samples_s": samples}, "backward": None,
        "memory_peak_bytes": None, "side": side, "round": index, "prepared_in_round": index,
    }  # fmt: skip


def _write_ab(tmp_path, records: list[dict[str, object]]) -> str:
    import json

    path = tmp_path / "ab.json"
    path.write_text(json.dumps({"schema_version": 1, "kind": "ab", "environment": {}, "results": records}))
    return str(path)


def _ab_records(rows: dict[int, list[tuple[float, float]]]) -> list[dict[str, object]]:
    """``exp`` rows (by size): each round's (base, new) fastest pass in seconds."""
    return [
        _record(size, side, index, [seconds * f for f in SPREAD])
        for size, rounds in rows.items()
        for index, pair in enumerate(rounds)
        for side, seconds in zip(("base", "new"), pair, strict=True)
    ]


def _ab_file(tmp_path, rows: dict[int, list[tuple[float, float]]]):
    """An A/B file of ``exp`` rows (by size): each round's (base, new) fastest pass in seconds."""
    return _write_ab(tmp_path, _ab_records(rows))


def _verdicts(path: str) -> dict[int, object]:
    import json

    from opperf.results.load import read_ab
    from opperf.verdicts.diff import diff_ab

    result = diff_ab(read_ab(path), threshold=0.05, alpha=0.05)
    return {json.loads(row.key.inputs)["data"]["shape"][0]: row for row in result.rows}


def _unchanged(rounds: int, seed: int, sd: float = 0.01) -> list[tuple[float, float]]:
    import random

    draw = random.Random(seed)
    return [(1e-3, 1e-3 * math.exp(draw.gauss(0.0, sd))) for _ in range(rounds)]


def test_a_change_seen_in_every_round_is_called_after_two_rounds(tmp_path):
    """Two rounds of a 300x slowdown, and two that agree on the direction but not the size (100x
    and 900x): both ``slower``, their intervals far from 1 (one such row read 304x ``inconclusive``,
    interval 0.0001-8e8)."""
    rows = {size: _unchanged(10, size) for size in range(1, 31)}
    rows[1000] = [(1e-3, 0.28), (1e-3, 0.33)]
    rows[2000] = [(1e-3, 0.1), (1e-3, 0.9)]
    verdicts = _verdicts(_ab_file(tmp_path, rows))
    for size in (1000, 2000):
        row = verdicts[size]
        assert row.verdict.value == "slower", (size, row.ratio_low, row.ratio_high, row.reason)
        assert row.ratio_low > 10
    assert verdicts[1000].ratio_low > 100 and verdicts[1000].ratio_high < 1000


def test_a_job_whose_rows_mostly_changed_still_finds_the_unchanged_ones_same(tmp_path):
    """Thirty rows 2-30x slower or faster (oneDNN off, say) and ten unchanged: a null fitted to all
    rows' ratios would take the changes for noise and leave the unchanged rows ``inconclusive`` with
    intervals of +-10% and more; tested on their own rounds, they are ``same``."""
    rows = {}
    for size in range(1, 31):
        factor = (2 + size) ** (1 if size % 3 else -1)
        rows[size] = [(1e-3, 1e-3 * factor * 1.01), (1e-3, 1e-3 * factor * 0.99)]
    for size in range(100, 110):
        rows[size] = _unchanged(6, size)
    verdicts = _verdicts(_ab_file(tmp_path, rows))
    changed = [verdicts[size].verdict.value for size in range(1, 31)]
    assert changed.count("slower") == 20 and changed.count("faster") == 10
    assert [verdicts[size].verdict.value for size in range(100, 110)] == ["same"] * 10
    assert all(verdicts[size].ratio_high - verdicts[size].ratio_low < 0.05 for size in range(100, 110))


def test_an_aa_set_calls_nothing_and_is_mostly_same(tmp_path):
    """Two hundred unchanged rows, rounds scattered by 3% (3 to 10 rounds each): none is called,
    and most are ``same``."""
    rows = {size: _unchanged(3 + size % 8, size, sd=0.03) for size in range(1, 201)}
    counts = statistics_counter(row.verdict.value for row in _verdicts(_ab_file(tmp_path, rows)).values())
    assert counts.get("slower", 0) + counts.get("faster", 0) == 0
    assert counts["same"] >= 140, counts


def statistics_counter(values):
    from collections import Counter

    return Counter(values)


def test_a_stopped_job_says_so_and_judges_no_row_short_of_its_minimum_rounds(tmp_path, capsys):
    """An A/A job stopped by SIGTERM after round 0 of some rows: they are not judged (four were
    called slower so, and the gate exited 1), and the diff names the stop."""
    import json

    from opperf.cli import main

    rows = {size: _unchanged(2, size) for size in range(1, 31)}
    rows.update({size: [(1e-3, 1.3e-3)] for size in range(100, 104)})  # round 0 only, 1.3x off
    path = _ab_file(tmp_path, rows)
    from pathlib import Path

    document = json.loads(Path(path).read_text())
    document["ab"] = {"interrupted": True, "schedule": {"min_rounds": 2}}
    Path(path).write_text(json.dumps(document))
    assert main(["diff", path]) == 0
    out = capsys.readouterr().out
    assert "The A/B job was stopped after 2 rounds: a row with fewer than its 2 rounds is inconclusive" in out
    verdicts = _verdicts(path)
    for size in range(100, 104):
        assert verdicts[size].verdict.value == "inconclusive"
        assert verdicts[size].reason == "1 round of the job's 2"


def test_same_needs_the_rounds_medians_within_the_band_too(tmp_path):
    """A row whose every round's fastest pass is unchanged while most of its passes are 10% slower
    (the passes fall in two modes, and the fastest of each side comes from the fast one) is not
    ``same``: the rounds' medians moved. Its neighbour, unchanged in both, is ``same``."""
    fast = [1e-3 * (1 + 0.0013 * k) for k in range(7)]
    slow = [1.1e-3 * (1 + 0.0017 * k) for k in range(5)]
    samples = {
        # size: (base passes, new passes), the same in each of six rounds
        1: (fast, fast[:2] + slow),
        2: (fast, [f * 1.0009 for f in fast]),
    }
    records = [
        _record(size, side, index, [p * (1 + 0.002 * index) for p in passes])
        for size, sides in samples.items()
        for index in range(6)
        for side, passes in zip(("base", "new"), sides, strict=True)
    ]
    records += _ab_records({size: _unchanged(6, size) for size in range(100, 130)})  # the rounds' null
    path = _write_ab(tmp_path, records)
    verdicts = _verdicts(path)
    assert verdicts[1].verdict.value == "inconclusive"
    assert "their medians do not" in verdicts[1].reason
    assert verdicts[2].verdict.value == "same"


def test_a_row_the_timer_quantises_more_coarsely_than_the_threshold_is_never_same(tmp_path):
    """Every round of a 9 us row reads whole microseconds, alike on both sides: its rounds' ratios
    agree exactly, but 9.0 against 9.9 us would read the same. Its 1 ms neighbour, as steady, is
    ``same``."""
    passes = {
        1: [9e-6, 9e-6, 10e-6, 9e-6, 11e-6, 9e-6, 10e-6],
        2: [1e-3 * (1 + 0.0013 * k) for k in range(7)],
    }
    records = [
        _record(size, side, index, found)
        for size, found in passes.items()
        for index in range(6)
        for side in ("base", "new")
    ]
    records += _ab_records({size: _unchanged(6, size) for size in range(100, 130)})  # the rounds' null
    verdicts = _verdicts(_write_ab(tmp_path, records))
    assert verdicts[1].verdict.value == "inconclusive"
    assert "one tick of the timer (1 us) is" in verdicts[1].reason
    assert verdicts[2].verdict.value == "same"


def _ab_file_across(tmp_path, threads: tuple[int, int]) -> str:
    """An A/B file of two ``exp`` rows whose builds set ``threads`` to these values (base, new)."""
    import json

    records = [
        {**record, "threads": threads[0] if record["side"] == "base" else threads[1]}
        for record in _ab_records({size: _unchanged(3, size) for size in (1, 2)})
    ]
    builds = {
        side: {"options": {"threads": count}} for side, count in zip(("base", "new"), threads, strict=True)
    }
    path = tmp_path / "ab.json"
    document = {
        "schema_version": 1,
        "kind": "ab",
        "ab": {"builds": builds},
        "environment": {},
        "results": records,
    }
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(("threads", "noted"), [((1, 2), True), ((2, 2), False)])
def test_a_diff_says_compared_across_only_a_setting_whose_sides_differ(tmp_path, threads, noted):
    """Builds that set ``threads`` to 1 and 2 make a note naming both; builds that both say 2 (an
    edited file) vary nothing, and the diff does not claim "threads 2 (base) against 2 (new)"."""
    from opperf.results.load import read_ab
    from opperf.verdicts.diff import diff_ab

    result = diff_ab(read_ab(_ab_file_across(tmp_path, threads)), threshold=0.05, alpha=0.05)
    notes = [note for note in result.summary.notes if note.startswith("Compared across")]
    assert notes == (
        ["Compared across threads 1 (base) against 2 (new): each verdict is the effect of that change."]
        if noted
        else []
    )
    assert len(result.rows) == 2
