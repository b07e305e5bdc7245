"""Turning input descriptions into JAX arrays on a device from a seeded numpy generator, or into
``jax.ShapeDtypeStruct``s that ``jax.eval_shape`` checks a call with before anything runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from opperf.results.measurement import InputValue, TensorSpec, is_tensor_list

INTEGER_RANGE = (1, 10)
"""Integer arrays that are not indices are drawn from [1, 10): no zero divisors, no overflow."""

NO_64_BIT = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
"""JAX without ``jax_enable_x64`` has no 64-bit arrays: the dtype it makes instead."""


def array_dtype(spec: TensorSpec, dtype: str) -> np.dtype:
    name = spec.dtype or dtype
    return np.dtype(NO_64_BIT.get(name, name))


def host_values(spec: TensorSpec, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """The array's values on the host: uniform in the spec's range (indices floored), booleans
    half true, or the square matrices a structure asks for."""
    target = array_dtype(spec, dtype)
    if target == np.bool_:
        return rng.uniform(size=spec.shape) < 0.5
    if spec.structure == "sorted_unique":
        ids = rng.choice(np.arange(int(spec.low), int(spec.high)), size=spec.shape, replace=False)
        return np.sort(ids).astype(target)
    if spec.integral:
        values = np.floor(rng.uniform(spec.low, spec.high, size=spec.shape))
    elif np.issubdtype(target, np.integer):
        values = rng.integers(*INTEGER_RANGE, size=spec.shape)
    else:
        values = rng.uniform(spec.low, spec.high, size=spec.shape)
    if spec.structure in ("spd", "lower_triangular"):
        n = values.shape[-1]
        values = (
            values @ np.swapaxes(values, -1, -2) if spec.structure == "spd" else np.tril(values)
        ) + n * np.eye(n)
    return values.astype(target, copy=False)


def materialize(value: InputValue, dtype: str, device: Any, rng: np.random.Generator) -> Any:
    """Arrays on ``device`` for TensorSpecs (a list for a tuple of them); other values pass."""
    import jax

    if isinstance(value, TensorSpec):
        return jax.device_put(host_values(value, dtype, rng), device)
    if is_tensor_list(value):
        return [materialize(v, dtype, device, rng) for v in value]
    return value


def abstract(value: InputValue, dtype: str) -> Any:
    """A ``jax.ShapeDtypeStruct`` for a TensorSpec (a list for a tuple of them); other values pass."""
    import jax

    if isinstance(value, TensorSpec):
        return jax.ShapeDtypeStruct(value.shape, array_dtype(value, dtype))
    if is_tensor_list(value):
        return [abstract(v, dtype) for v in value]
    return value
