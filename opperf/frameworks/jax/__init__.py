"""JAX: its public array functions (``jax.numpy``, ``jax.nn``, ``jax.scipy.special``, ``jax.lax``) as
operators, inputs from their signatures, validity from ``jax.eval_shape``, backward through
``jax.vjp``, and ``jax.jit`` as the compile stage.

What this module itself says needs no JAX: which functions and namespaces are JAX's, and how its
docstrings document an array argument.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from opperf.frameworks.contract import Framework

SPELLED_NAMESPACES = ("jax", "jnp", "lax")
"""The first word of every namespace spelling JAX's are typed with (``jnp.exp``, ``lax.conv``)."""


def owns(function: Callable[..., object]) -> bool:
    """Whether ``function`` is JAX's, by its module."""
    module = getattr(function, "__module__", None) or getattr(type(function), "__module__", "") or ""
    return module.split(".")[0] in ("jax", "jaxlib")


def owns_namespace(namespace: str) -> bool:
    """Whether a user-facing namespace name (``jnp``, ``jax.numpy``, ``lax``, ``jax.nn``) is JAX's."""
    return namespace.split(".")[0] in SPELLED_NAMESPACES


FRAMEWORK = Framework(
    name="jax",
    display_name="JAX",
    imports="jax",
    backend="backend:JaxBackend",
    documented_tensor=re.compile(r"\bArray(Like)?\b"),
    owns=owns,
    owns_namespace=owns_namespace,
    namespaces="jnp (jax.numpy), jax.nn, jax.scipy.special, lax (jax.lax)",
    capabilities=frozenset({"capture"}),
    layout_note="JAX arrays have no layout a user chooses: XLA decides it",
    in_place_note="its arrays are immutable",
    profilers=("python",),
    profiler_note="JAX has no per-operator profiler opperf reads (its traces are TensorBoard files)",
    work_note="XLA's cost analysis of the compiled call (its FLOPs; bytes: every input read and output "
    "written once), read as the configuration is prepared; the unoptimised program's where the compiled "
    "one calls a library (oneDNN), none where both do (LAPACK's factorisations)",
    keeps_compiled=True,
    checked_settings=("XLA_FLAGS",),
    stages=("eager", "compile"),
)
"""JAX as opperf knows it (``opperf.frameworks.contract``): it declares model capture (from a
function's jaxpr), and no long-tail operators or fused patterns; it is timed by the Python timer."""
