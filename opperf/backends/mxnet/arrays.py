"""Turning input descriptions into MXNet arrays on a device, seeded."""

from __future__ import annotations

from opperf.utils.results import InputValue, TensorSpec

NUMPY_FRONTEND = "np"
ND_FRONTEND = "nd"


def make_array(spec: TensorSpec, dtype: str, ctx, frontend: str):
    """A tensor drawn uniformly from the spec's range, in the spec's dtype or else the run's."""
    import mxnet as mx

    array = mx.nd.random.uniform(spec.low, spec.high, shape=spec.shape, ctx=ctx, dtype="float32")
    if spec.integral:
        array = array.floor()
    array = array.astype(spec.dtype or dtype)
    return array.as_np_ndarray() if frontend == NUMPY_FRONTEND else array


def materialize(value: InputValue, dtype: str, ctx, frontend: str) -> object:
    """Arrays for TensorSpecs (and tuples of them); given arrays and scalar values pass through."""
    if isinstance(value, TensorSpec):
        return make_array(value, dtype, ctx, frontend)
    if isinstance(value, tuple) and value and all(isinstance(v, TensorSpec) for v in value):
        return [make_array(v, dtype, ctx, frontend) for v in value]
    return value


def is_array(value: object) -> bool:
    import mxnet as mx

    return isinstance(value, mx.nd.NDArray)


def is_float_array(value: object) -> bool:
    import numpy as np

    return is_array(value) and np.issubdtype(value.dtype, np.floating)


def flatten_outputs(outputs: object) -> list:
    """The operator's array outputs as a flat list (operators return one array or a list)."""
    if is_array(outputs):
        return [outputs]
    if isinstance(outputs, (list, tuple)):
        return [o for o in outputs if is_array(o)]
    return []
