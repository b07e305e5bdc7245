"""Backward passes in JAX: which array arguments ``jax.vjp`` differentiates (the floating-point
ones; the others are held fixed), and the cotangent a pullback is applied to (ones for every
floating-point output)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

import numpy as np

from opperf.frameworks.jax.calls import Call

Differentiable = tuple[bool, ...]
"""Per array argument of a call, whether ``jax.vjp`` differentiates it."""


def is_float(value: object) -> bool:
    import jax.numpy as jnp

    return hasattr(value, "dtype") and bool(jnp.issubdtype(value.dtype, jnp.inexact))


def differentiable_arrays(call: Call) -> Differentiable:
    """Which of the call's arrays are floating point (a list only when all of its arrays are)."""
    return tuple(
        all(is_float(v) for v in value) if isinstance(value, (list, tuple)) else is_float(value)
        for value in call.arrays
    )


def of_differentiable(
    call: Call, differentiable: Differentiable
) -> tuple[Callable[..., object], list[object]]:
    """The call as a function of its differentiable arrays alone (the others held fixed), and those."""
    fixed = [a for a, d in zip(call.arrays, differentiable, strict=True) if not d]
    chosen = [a for a, d in zip(call.arrays, differentiable, strict=True) if d]

    def function(*values: object) -> object:
        given, held = iter(values), iter(fixed)
        return call.run(*(next(given) if d else next(held) for d in differentiable))

    return function, chosen


def cotangent(outputs: object) -> object:
    """Ones for every floating-point output, float0 zeros for the others (which carry no gradient).
    The ones are made on the host and put on the output's device: ``jnp.ones_like`` compiled a
    broadcast for every shape, 25 ms a configuration of ``jax.lax``'s operators."""
    import jax

    leaves = jax.tree_util.tree_leaves(outputs)
    return seeded(
        outputs,
        tuple(
            jax.device_put(np.ones(leaf.shape, dtype=leaf.dtype), next(iter(leaf.devices())))
            for leaf in leaves
            if is_float(leaf)
        ),
    )


def has_float_output(outputs: object) -> bool:
    import jax

    return any(is_float(leaf) for leaf in jax.tree_util.tree_leaves(outputs))


def float_seeds(call: Call, differentiable: Differentiable) -> tuple[object, ...]:
    """Abstract arrays for the floating-point outputs of the call: the cotangent ``full_pass`` takes."""
    import jax

    function, chosen = of_differentiable(call, differentiable)
    outputs = jax.eval_shape(function, *chosen)
    return tuple(
        jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
        for leaf in jax.tree_util.tree_leaves(outputs)
        if is_float(leaf)
    )


def seeded(outputs: object, seeds: tuple[object, ...]) -> object:
    """A cotangent for ``outputs``: ``seeds`` for its floating-point leaves in order, float0 zeros for
    the others."""
    import jax

    leaves, tree = jax.tree_util.tree_flatten(outputs)
    given = iter(seeds)
    return jax.tree_util.tree_unflatten(
        tree,
        [
            next(given) if is_float(leaf) else np.zeros(np.shape(leaf), dtype=jax.dtypes.float0)
            for leaf in leaves
        ],
    )


def full_pass(call: Call, differentiable: Differentiable) -> Callable[..., object]:
    """The call as one function of its arrays (and, where ``differentiable`` names arrays to
    differentiate, of the cotangents of its floating-point outputs, its last argument) that runs the
    forward pass and its backward pass: for XLA to compile whole. The cotangent is an argument, not
    ones made inside, so that XLA cannot fold the backward pass into constants (it spent 11 s folding
    ``cumsum``'s)."""
    import jax

    def run(*values: object) -> object:
        if not differentiable:
            return call.run(*values)
        *arrays, seeds = values
        traced = replace(call, arrays=tuple(arrays))
        function, chosen = of_differentiable(traced, differentiable)
        outputs, pullback = jax.vjp(function, *chosen)
        return outputs, pullback(seeded(outputs, cast("tuple[object, ...]", seeds)))

    return run
