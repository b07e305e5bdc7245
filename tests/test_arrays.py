"""Input generation: seeded, in range, and shaped for the operators that need structure."""

import numpy as np
import pytest

from opperf.operators.values import INTEGER_RANGE, host_values
from opperf.results.measurement import TensorSpec


def _draw(spec, dtype="float32", seed=0):
    return host_values(spec, dtype, np.random.default_rng(seed))


def test_same_seed_same_values():
    spec = TensorSpec((8, 8))
    assert (_draw(spec, seed=7) == _draw(spec, seed=7)).all()
    assert not (_draw(spec, seed=7) == _draw(spec, seed=8)).all()


def test_float_values_in_range_and_dtype():
    values = _draw(TensorSpec((1000,)), "float64")
    assert values.dtype == np.float64
    assert values.min() >= 0.1 and values.max() < 1.0


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_tensors_have_no_zero_divisor(dtype):
    values = _draw(TensorSpec((1000,)), dtype)
    assert values.dtype == np.dtype(dtype)
    assert values.min() >= INTEGER_RANGE[0] and values.max() < INTEGER_RANGE[1]


def test_indices_stay_in_bounds_under_float16():
    values = _draw(TensorSpec((10000,), low=0, high=10000, integral=True), "float16")
    assert values.dtype == np.float32
    assert values.min() >= 0 and values.max() <= 9999
    assert (values == np.floor(values)).all()


def test_spd_matrices_factorize():
    values = _draw(TensorSpec((3, 6, 6), structure="spd"), "float64")
    assert np.allclose(values, np.swapaxes(values, -1, -2))
    np.linalg.cholesky(values)  # raises unless positive-definite


def test_lower_triangular_matrices_are_invertible():
    values = _draw(TensorSpec((5, 5), structure="lower_triangular"), "float64")
    assert (np.triu(values, k=1) == 0).all()
    assert (np.abs(np.diag(values)) > 0).all()
