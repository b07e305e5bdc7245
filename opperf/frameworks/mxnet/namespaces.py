"""MXNet's user-facing namespaces: which function a registry operator is called through, and which
operator a user's function is.

``mx.nd.Convolution`` and ``mx.nd.contrib.box_nms`` are generated front ends of registered operators;
``mx.nd.add`` and most of ``mx.np`` are Python wrappers that dispatch to several. Nothing here imports
MXNet until a function is looked up.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable

from opperf.frameworks.mxnet.registry import (
    GENERATED_MODULE_PREFIXES,
    NUMPY_NAMESPACES,
    exposure,
    load_registry,
)
from opperf.operators.info import Identity

# Namespace -> module whose attributes are that namespace's functions.
NAMESPACE_MODULES = {
    "mx.nd": "mxnet.ndarray",
    "mx.nd._internal": "mxnet.ndarray._internal",
    "mx.nd.contrib": "mxnet.ndarray.contrib",
    "mx.nd.linalg": "mxnet.ndarray.linalg",
    "mx.nd.random": "mxnet.ndarray.random",
    "mx.nd.sparse": "mxnet.ndarray.sparse",
    "mx.nd.image": "mxnet.ndarray.image",
    "mx.np": "mxnet.numpy",
    "mx.npx": "mxnet.numpy_extension",
}


def namespace_of(function: Callable[..., object]) -> str:
    """The user-facing namespace of an MXNet function, from its module."""
    module = getattr(function, "__module__", "") or ""
    for prefix, namespace in (
        ("mxnet.ndarray.numpy_extension", "mx.npx"),
        ("mxnet.numpy_extension", "mx.npx"),
        ("mxnet.ndarray.numpy", "mx.np"),
        ("mxnet.numpy", "mx.np"),
        ("mxnet.ndarray.contrib", "mx.nd.contrib"),
        ("mxnet.ndarray.linalg", "mx.nd.linalg"),
        ("mxnet.ndarray.random", "mx.nd.random"),
        ("mxnet.ndarray.sparse", "mx.nd.sparse"),
        ("mxnet.ndarray.image", "mx.nd.image"),
        ("mxnet.ndarray._internal", "mx.nd._internal"),
        ("mxnet.ndarray.gen__internal", "mx.nd._internal"),
    ):
        if module.startswith(prefix):
            return namespace
    return "mx.nd._internal" if getattr(function, "__name__", "").startswith("_") else "mx.nd"


def resolve(namespace: str, op: str) -> Callable[..., object]:
    """The Python callable for ``op`` in ``namespace``; registry names resolve through their prefix."""
    module_name = NAMESPACE_MODULES.get(namespace)
    if module_name is not None:
        function = getattr(importlib.import_module(module_name), op, None)
        if callable(function):
            return function
    if op in load_registry().by_name:
        namespace, module_name, function_name = exposure(op)
        candidates = [(module_name, function_name)]
        prefix = op[: len(op) - len(function_name)] if function_name != op else ""
        if namespace in NAMESPACE_MODULES and not prefix:
            candidates.append((NAMESPACE_MODULES[namespace], op.split("_", 2)[-1]))
        for module_name, function_name in candidates:
            function = getattr(importlib.import_module(module_name), function_name, None)
            if callable(function) and getattr(function, "__code__", None) is not None:
                return function
    raise LookupError(f"no operator {op!r} in namespace {namespace!r}")


def identify(function: Callable[..., object]) -> Identity:
    """(namespace, name, registry record or None) of a user-supplied MXNet function.

    The registry record is found when the function is the generated front end of a registered
    operator (``mx.nd.Convolution``, ``mx.nd.contrib.box_nms``); Python wrappers such as ``mx.nd.add``
    dispatch to several operators and have none.
    """
    namespace = namespace_of(function)
    name = getattr(function, "__name__", repr(function))
    if not is_generated(function):
        return Identity(namespace, name, None)
    by_name = load_registry().by_name
    prefixes = GENERATED_MODULE_PREFIXES.get(getattr(function, "__module__", ""), ("",))
    registered = next((p + name for p in prefixes if p + name in by_name), name)
    return Identity(namespace, name, by_name.get(registered))


def is_generated(function: Callable[..., object]) -> bool:
    """MXNet generates each registered operator's front end from source text at import time."""
    code = getattr(function, "__code__", None)
    return code is not None and code.co_filename == "<string>"


def _spellings() -> dict[str, str]:
    """Each namespace as users type it: ``mx.nd``, ``nd`` and ``mxnet.ndarray`` are one namespace."""
    spelled: dict[str, str] = {}
    for namespace, module in NAMESPACE_MODULES.items():
        for spelling in (namespace, namespace.removeprefix("mx."), module):
            spelled.setdefault(spelling, namespace)
    return spelled


SPELLINGS = _spellings()
"""Namespace spellings a selection may qualify a name with, to the namespace they mean."""

UNQUALIFIED_SEARCH = ("mx.nd", "mx.np", "mx.npx")
"""Where an unqualified public name is looked for, in order: ``add`` is ``mx.nd.add``."""

# mx.np's Python wrappers reach their operator through MXNet's FFI under these registry prefixes.
_FFI_PREFIXES = ("_npi_", "_np_", "_npx_")


def called_operator(namespace: str, name: str) -> str | None:
    """The canonical registry operator that ``namespace.name`` calls on tensors, or None.

    A generated front end is its operator (``mx.nd.dot``, ``mx.npx.relu``). A Python wrapper names the
    operator it calls on two arrays before its scalar forms (``mx.nd.add`` calls ``broadcast_add``, or
    ``_plus_scalar`` for a number), and mx.np's reach theirs through the FFI (``mx.np.add`` is
    ``_npi_add``).
    """
    try:
        function = resolve(namespace, name)
    except LookupError:
        return None
    info = identify(function).info
    if info is not None:
        return info.name
    by_name = load_registry().by_name
    code = getattr(function, "__code__", None)
    in_code = [n for n in (code.co_names if code else ()) if not _python_name(n)]
    if namespace in NUMPY_NAMESPACES:  # ``_npi.mean`` in the code, ``_api_internal.add`` to _npi_add
        in_code = [prefix + n for n in [name, *in_code] for prefix in _FFI_PREFIXES]
    for candidate in in_code:
        if candidate in by_name:
            return by_name[candidate].name
    return None


def _python_name(name: str) -> bool:
    """A name in a wrapper's code that is no operator it calls: a scalar form, or a Python builtin
    (``mx.npx.save`` checks ``any(...)``, which is no call of ``_np_any``)."""
    return name.endswith("_scalar") or hasattr(builtins, name)


def no_operator(namespace: str, name: str) -> str | None:
    """Why the public function ``namespace.name`` is no operator opperf times (``mx.nd.save`` is Python
    around MXNet's C API), or None where there is no such function or it calls one."""
    try:
        resolve(namespace, name)
    except LookupError:
        return None
    if called_operator(namespace, name) is not None:
        return None
    return "it calls no registered MXNet operator on arrays (or calls several)"
