import math

import pytest

from opperf.utils.stats import quantile, summarize


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
