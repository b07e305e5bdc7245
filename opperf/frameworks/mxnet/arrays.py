"""Turning input descriptions into MXNet arrays on a device, from a seeded generator."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from opperf.operators.values import host_values
from opperf.results.measurement import InputValue, TensorSpec, is_given_array, is_tensor_list
from opperf.utils.draws import DrawCache, GeneratorState, drawn

NUMPY_FRONTEND = "np"
ND_FRONTEND = "nd"


def _frozen(state: object) -> Hashable:
    """A generator state (nested dicts of numbers) as a hashable value."""
    if isinstance(state, dict):
        return tuple((key, _frozen(value)) for key, value in sorted(state.items()))
    return state


def _restore(rng: np.random.Generator, state: Any) -> None:
    rng.bit_generator.state = state


NUMPY_STATE = GeneratorState(
    key=lambda rng: _frozen(rng.bit_generator.state),
    read=lambda rng: rng.bit_generator.state,
    restore=_restore,
)


def host_draws() -> DrawCache[np.ndarray]:
    """A cache of host values drawn from numpy generators (``opperf.utils.draws``): kept arrays are
    read-only, and every caller copies them into an MXNet array, so they are handed out as they are."""
    return DrawCache(NUMPY_STATE, size=lambda values: values.nbytes, copy=lambda values: values)


def _read_only(values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False
    return values


def make_array(
    spec: TensorSpec, dtype: str, ctx, frontend: str, rng: np.random.Generator, draws: DrawCache | None = None
):
    """An MXNet array of the spec's values; ``draws`` remembers values drawn before."""
    import mxnet as mx

    values = drawn(draws, (spec, dtype), rng, lambda: _read_only(host_values(spec, dtype, rng)))
    array = mx.nd.array(values, ctx=ctx, dtype=values.dtype)
    if spec.storage != "default":
        return array.tostype(spec.storage)
    return array.as_np_ndarray() if frontend == NUMPY_FRONTEND else array


def materialize(
    value: InputValue,
    dtype: str,
    ctx,
    frontend: str,
    rng: np.random.Generator,
    draws: DrawCache | None = None,
) -> Any:
    """Arrays for TensorSpecs (and tuples of them); given arrays move to the frontend; scalars pass."""
    if isinstance(value, TensorSpec):
        return make_array(value, dtype, ctx, frontend, rng, draws)
    if is_tensor_list(value):
        return [make_array(v, dtype, ctx, frontend, rng, draws) for v in value]
    if is_given_array(value):
        return _to_frontend(value, frontend)
    return value


def _to_frontend(array, frontend: str):
    import mxnet as mx

    if frontend == NUMPY_FRONTEND and not isinstance(array, mx.np.ndarray):
        return array.as_np_ndarray()
    if frontend == ND_FRONTEND and isinstance(array, mx.np.ndarray):
        return array.as_nd_ndarray()
    return array


def is_array(value: object) -> bool:
    import mxnet as mx

    return isinstance(value, mx.nd.NDArray)


def is_float_array(value: Any) -> bool:
    return is_array(value) and np.issubdtype(value.dtype, np.floating)


def flatten_outputs(outputs: object) -> list:
    """The operator's array outputs as a flat list (operators return one array or a list)."""
    if is_array(outputs):
        return [outputs]
    if isinstance(outputs, (list, tuple)):
        return [o for o in outputs if is_array(o)]
    return []
