"""Turning input descriptions into JAX arrays on a device from a seeded numpy generator, or into
``jax.ShapeDtypeStruct``s that ``jax.eval_shape`` checks a call with before anything runs."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from opperf.operators import values
from opperf.results.measurement import InputValue, TensorSpec, is_tensor_list

NO_64_BIT = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
"""JAX without ``jax_enable_x64`` has no 64-bit arrays: the dtype it makes instead."""


def array_dtype(spec: TensorSpec, dtype: str) -> np.dtype:
    name = spec.dtype or dtype
    return np.dtype(NO_64_BIT.get(name, name))


def host_values(spec: TensorSpec, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """The array's values on the host (``opperf.operators.values``) in the dtype JAX makes of them;
    booleans (conditions, masks) half true."""
    target = array_dtype(spec, dtype)
    if target == np.bool_:
        return rng.uniform(size=spec.shape) < 0.5
    return values.host_values(replace(spec, dtype=target.name), dtype, rng)


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


def total_bytes(tree: Any) -> int:
    """The bytes of every array (or ``jax.ShapeDtypeStruct``) among ``tree``'s leaves."""
    import jax

    leaves = jax.tree_util.tree_leaves(tree)
    return sum(math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize for leaf in leaves)
