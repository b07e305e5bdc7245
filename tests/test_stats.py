import math

import pytest

from opperf.utils.stats import NOISE_THRESHOLD, median_interval, quantile, relative_precision, summarize


def test_summary_hand_computed():
    summary = summarize([4.0, 1.0, 3.0, 2.0])
    assert summary.n == 4
    assert summary.mean == 2.5
    assert summary.median == 2.5
    assert (summary.min, summary.max) == (1.0, 4.0)
    assert math.isclose(summary.stdev, math.sqrt(5 / 3))
    # Quartiles by linear interpolation: 1.75 and 3.25.
    assert math.isclose(summary.iqr, 1.5)


def test_single_sample():
    summary = summarize([0.5])
    assert (summary.median, summary.stdev, summary.iqr) == (0.5, 0.0, 0.0)


def test_quantile_interpolates():
    assert quantile([10, 20, 30, 40, 50], 0.9) == 46.0
    assert quantile([7], 0.5) == 7


@pytest.mark.parametrize("bad", [[], ()])
def test_empty_samples_rejected(bad):
    with pytest.raises(ValueError):
        summarize(bad)


def test_quantile_range_checked():
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)


def test_percentiles_hand_computed():
    samples = [float(i) for i in range(1, 101)]  # 1..100
    summary = summarize(samples)
    # Linear interpolation at positions 0.9 * 99 = 89.1 and 0.99 * 99 = 98.01 (0-based).
    assert math.isclose(summary.p90, 90.1)
    assert math.isclose(summary.p99, 99.01)


def test_median_interval_ranks_hand_computed():
    # n = 100: z√n = 19.6, ranks floor(40.2) = 40 and ceil(60.8) = 61.
    assert median_interval([float(i) for i in range(1, 101)]) == (40.0, 61.0)
    # n = 4: the interval is the whole range.
    assert median_interval([3.0, 1.0, 4.0, 2.0]) == (1.0, 4.0)


def test_relative_precision_shrinks_with_more_samples():
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 2
    many = few * 20
    assert relative_precision(many) < relative_precision(few)
    assert math.isclose(relative_precision([2.0] * 30), 0.0)


def test_noise_flag_fires_on_a_noisy_sample_set():
    steady = summarize([1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99])
    noisy = summarize([1.0, 1.5, 0.8, 1.3, 0.9, 1.6, 1.0, 1.2])
    assert not steady.noisy and steady.relative_iqr < NOISE_THRESHOLD
    assert noisy.noisy and noisy.relative_iqr > NOISE_THRESHOLD


@pytest.mark.parametrize(
    ("namespace", "op", "name"),
    [
        ("jax.lax", "lax.exp", "jax.lax.exp"),
        ("jax.nn", "nn.softmax", "jax.nn.softmax"),
        ("jax.scipy.special", "special.gammaln", "jax.scipy.special.gammaln"),
        ("jax.numpy", "exp", "jax.numpy.exp"),
        ("mx.np", "linalg.norm", "mx.np.linalg.norm"),
        ("torch", "nn.functional.relu", "torch.nn.functional.relu"),
    ],
)
def test_an_operator_is_named_as_users_call_it_its_namespace_said_once(namespace, op, name):
    from opperf.results.key import qualified

    assert qualified(namespace, op) == name
