"""Which aten operator a PyTorch function is: ``identify`` finds a function's or Tensor method's
registry record, ``called_operator`` the operator a public name calls. The entry points themselves
(where each operator is callable from Python) are ``entry_points``; the registry is built from them,
and this module reads the registry."""

from __future__ import annotations

from collections.abc import Callable

from opperf.frameworks.torch.entry_points import (
    NAMESPACES,
    SPELLINGS,
    TENSOR_NAMESPACE,
    UNQUALIFIED_SEARCH,
    function_index,
    namespace_object,
    public_function,
    resolve,
)
from opperf.frameworks.torch.registry import load_registry
from opperf.operators.info import Identity

__all__ = [
    "NAMESPACES",
    "SPELLINGS",
    "TENSOR_NAMESPACE",
    "UNQUALIFIED_SEARCH",
    "called_operator",
    "identify",
    "namespace_object",
    "no_operator",
    "public_function",
    "resolve",
]


def identify(function: Callable[..., object]) -> Identity:
    """(namespace, name, registry record or None) of a PyTorch function or Tensor method.

    ``torch.add``, ``torch.Tensor.add`` and ``torch.nn.functional.relu`` are all found with their
    operator; a function opperf does not know keeps its module and name and has no record.
    """
    found = function_index().get(id(function))
    if found is None:
        module = getattr(function, "__module__", None) or "custom"
        return Identity(module, getattr(function, "__name__", repr(function)), None)
    return Identity(*found, load_registry().by_entry_point.get(found))


def called_operator(namespace: str, name: str) -> str | None:
    """The registry operator that the public function ``namespace.name`` is an entry point of, or None
    (a Python function that calls several, such as ``torch.nn.functional.cross_entropy``)."""
    function = public_function(namespace, name)
    info = identify(function).info if function is not None else None
    return info.name if info is not None else None


def no_operator(namespace: str, name: str) -> str | None:
    """Why the public function ``namespace.name`` is no operator opperf times (``torch.save`` is Python
    that calls no aten operator, ``F.cross_entropy`` calls several), or None where there is no such
    function or it is one."""
    if public_function(namespace, name) is None or called_operator(namespace, name) is not None:
        return None
    return "it is no entry point of one aten operator (it calls none, or several)"
