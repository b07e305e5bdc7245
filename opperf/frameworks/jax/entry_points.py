"""Where JAX's operators are callable: its public array namespaces, searched in a fixed order, and how
an operator is named (``exp`` in ``jax.numpy``; ``nn.relu``, ``special.erf`` and ``lax.exp`` elsewhere,
so that ``jnp.exp`` and ``lax.exp``, two functions, are two operators)."""

from __future__ import annotations

import functools
import importlib
import types
from collections import defaultdict
from collections.abc import Callable

from opperf.utils.errors import OpperfError, suggest

NAMESPACES: tuple[tuple[str, str], ...] = (
    ("jax.numpy", ""),
    ("jax.nn", "nn."),
    ("jax.scipy.special", "special."),
    ("jax.lax", "lax."),
)
"""(namespace, the prefix its operators' names carry), in the order entry points are searched."""

SPELLINGS: dict[str, str] = {
    **{namespace: namespace for namespace, _ in NAMESPACES},
    "jnp": "jax.numpy",
    "nn": "jax.nn",
    "special": "jax.scipy.special",
    "jsp.special": "jax.scipy.special",
    "lax": "jax.lax",
}
"""Namespace spellings a selection may qualify a name with (``jnp`` as in ``import jax.numpy as jnp``)."""

UNQUALIFIED_SEARCH = tuple(namespace for namespace, _ in NAMESPACES)
"""Where an unqualified public name is looked for, in entry-point order."""


def namespace_object(namespace: str) -> types.ModuleType | None:
    """The module whose attributes are the namespace's functions (``jnp`` is ``jax.numpy``), or None
    for another namespace."""
    namespace = SPELLINGS.get(namespace, "")
    return importlib.import_module(namespace) if namespace else None


def public_function(namespace: str, name: str) -> Callable[..., object] | None:
    """``namespace.name`` if it is a public function (not a class, a dtype, a module or a constant)."""
    if name.startswith("_"):
        return None
    owner = namespace_object(namespace)
    function = getattr(owner, name, None) if owner is not None else None
    if function is None or isinstance(function, (type, types.ModuleType)) or not callable(function):
        return None
    if isinstance(function, _FUNCTION_TYPES) or hasattr(function, "__wrapped__"):  # jit or custom_jvp
        return function
    if type(function).__module__.split(".")[0] in ("jax", "jaxlib"):  # jnp.add as a ufunc object (0.5+)
        return function
    return None  # a typing alias or another callable object that is no function


_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, functools.partial)


def operator_name(namespace: str, name: str) -> str:
    """The operator name of ``namespace.name``: its name in ``jax.numpy``, prefixed elsewhere."""
    return dict(NAMESPACES)[namespace] + name


@functools.cache
def names_by_function() -> dict[int, tuple[tuple[str, str], ...]]:
    """id(function) -> every (namespace, name) under which it is public, in search order (namespaces
    as ``NAMESPACES`` lists them, names alphabetically)."""
    found: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for namespace, _ in NAMESPACES:
        for name in sorted(dir(namespace_object(namespace))):
            function = public_function(namespace, name)
            if function is not None:
                found[id(function)].append((namespace, name))
    return {key: tuple(points) for key, points in found.items()}


@functools.cache
def function_index() -> dict[int, tuple[str, str]]:
    """id(function) -> (namespace, name) of every public function, the first namespace in search
    order (then the first name in alphabetical order) winning when one object has several names."""
    return {key: points[0] for key, points in names_by_function().items()}


def resolve(namespace: str, name: str) -> Callable[..., object]:
    """The public function ``name`` of ``namespace``; OpperfError with the closest names otherwise."""
    function = public_function(namespace, name)
    if function is not None:
        return function
    owner = namespace_object(namespace)
    if owner is None:
        known = ", ".join(space for space, _ in NAMESPACES)
        raise OpperfError(f"unknown JAX namespace {namespace!r}; choose one of: {known}")
    raise OpperfError(f"unknown JAX operator {namespace}.{name}{suggest(name, dir(owner))}")
