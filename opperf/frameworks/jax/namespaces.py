"""Which JAX operator a function is: ``identify`` finds a function's registry record, ``called_operator``
the operator a public name calls. The entry points themselves are ``entry_points``; the registry is
built from them, and this module reads the registry."""

from __future__ import annotations

from collections.abc import Callable

from opperf.frameworks.jax.entry_points import (
    NAMESPACES,
    SPELLINGS,
    UNQUALIFIED_SEARCH,
    function_index,
    namespace_object,
    operator_name,
    public_function,
    resolve,
)
from opperf.frameworks.jax.registry import NOT_OPERATORS, load_registry
from opperf.operators.info import Identity

__all__ = [
    "NAMESPACES",
    "SPELLINGS",
    "UNQUALIFIED_SEARCH",
    "called_operator",
    "identify",
    "namespace_object",
    "no_operator",
    "public_function",
    "resolve",
]


def identify(function: Callable[..., object]) -> Identity:
    """(namespace, name, registry record or None) of a JAX function: ``jnp.exp`` and ``lax.exp`` each
    with its operator; a function opperf does not know keeps its module and name and has no record."""
    found = function_index().get(id(function))
    if found is None:
        module = getattr(function, "__module__", None) or "custom"
        return Identity(module, getattr(function, "__name__", repr(function)), None)
    return Identity(*found, load_registry().by_entry_point.get(found))


def called_operator(namespace: str, name: str) -> str | None:
    """The registry operator the public function ``namespace.name`` is, or None."""
    function = public_function(namespace, name)
    info = identify(function).info if function is not None else None
    return info.name if info is not None else None


def no_operator(namespace: str, name: str) -> str | None:
    """Why the public function ``namespace.name`` is no operator opperf times (``jnp.load`` reads a
    file), or None where there is no such function or it is an operator."""
    function = public_function(namespace, name)
    if function is None or called_operator(namespace, name) is not None:
        return None
    found = function_index().get(id(function), (namespace, name))
    return NOT_OPERATORS.get(operator_name(*found), "no registered JAX operator is this function")
