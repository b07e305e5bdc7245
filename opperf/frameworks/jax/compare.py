"""How ``opperf compare`` calls an operator of the first namespace (``mx.nd``, ``mx.np``) in JAX, where
the names or arguments differ; any other operator is called by its own name in ``jax.numpy``, whose
argument names are NumPy's, as ``mx.np``'s are. Framework-free: imports nothing of JAX."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from opperf.operators.counterparts import Counterpart
from opperf.results.measurement import TensorSpec

DEFAULT_RENAMES: Mapping[str, str] = {"dim": "axis"}
"""The renames of an operator called by its own name (a PyTorch-style ``dim`` is NumPy's ``axis``)."""


def _integral_indices(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """JAX's ``take`` takes integer indices only (MXNet's casts floating ones): the same positions, as
    int32 within the axis it takes along (the flattened array without one)."""
    indices, data = translated.get("indices"), translated.get("a")
    if not isinstance(indices, TensorSpec) or not isinstance(data, TensorSpec):
        return translated
    axis = translated.get("axis")
    size = math.prod(data.shape) if axis is None else data.shape[axis]
    return {**translated, "indices": replace(indices, dtype="int32", integral=True, low=0, high=size)}


def _integral_exponent(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """JAX's ``ldexp`` takes integer exponents only (MXNet's and PyTorch's take floating ones)."""
    exponent = translated.get("x2")
    if not isinstance(exponent, TensorSpec):
        return translated
    return {**translated, "x2": replace(exponent, dtype="int32", integral=True, low=-4, high=5)}


def _numpy(name: str, **settings: object) -> Counterpart:
    return Counterpart("jax.numpy", name, renames=DEFAULT_RENAMES, **settings)  # type: ignore[arg-type]


COUNTERPARTS: Mapping[str, Counterpart] = {
    "broadcast_add": _numpy("add"),
    "elemwise_add": _numpy("add"),
    "broadcast_sub": _numpy("subtract"),
    "elemwise_sub": _numpy("subtract"),
    "broadcast_mul": _numpy("multiply"),
    "elemwise_mul": _numpy("multiply"),
    "broadcast_div": _numpy("divide"),
    "elemwise_div": _numpy("divide"),
    "dot": _numpy("matmul", drop=frozenset({"transpose_a", "transpose_b"})),
    "batch_dot": Counterpart("jax.lax", "batch_matmul"),
    "softmax": Counterpart("jax.nn", "softmax", extra={"axis": -1}),
    "log_softmax": Counterpart("jax.nn", "log_softmax", extra={"axis": -1}),
    "relu": Counterpart("jax.nn", "relu"),
    "sigmoid": Counterpart("jax.nn", "sigmoid"),
    "take": _numpy("take", adapt=_integral_indices),
    "ldexp": _numpy("ldexp", adapt=_integral_exponent),
}
"""The calls that differ, by the operator's ``mx.nd`` name."""


def answers(counterpart: Counterpart, namespace: str) -> bool:
    """Whether a listed counterpart is how ``namespace`` (any of JAX's) calls the operator: yes."""
    return True
