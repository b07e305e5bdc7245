"""Where an aten operator is callable from Python: its public entry points, searched in a fixed order.

``aten::linalg_cholesky`` is ``torch.linalg.cholesky``, ``aten::special_erf`` is ``torch.special.erf``,
``aten::fft_rfft`` is ``torch.fft.rfft``; everything else keeps its name in ``torch``,
``torch.nn.functional`` or, where there is no function form, as a ``torch.Tensor`` method.
"""

from __future__ import annotations

import functools
import importlib
import types
from collections.abc import Callable

from opperf.utils.errors import OpperfError, suggest

TENSOR_NAMESPACE = "torch.Tensor"

# (namespace, aten name prefix the namespace drops), in the order entry points are searched.
NAMESPACES: tuple[tuple[str, str], ...] = (
    ("torch", ""),
    ("torch.nn.functional", ""),
    ("torch.linalg", "linalg_"),
    ("torch.special", "special_"),
    ("torch.fft", "fft_"),
    (TENSOR_NAMESPACE, ""),
)

# Operators whose public entry point has another name; the arguments keep their order.
RENAMED_ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "log_sigmoid": ("torch.nn.functional", "logsigmoid"),
    "im2col": ("torch.nn.functional", "unfold"),
    "col2im": ("torch.nn.functional", "fold"),
}


def namespace_object(namespace: str) -> object | None:
    """The module (or, for ``torch.Tensor``, the class) whose attributes are the namespace's functions."""
    if namespace == TENSOR_NAMESPACE:
        import torch

        return torch.Tensor
    if namespace not in dict(NAMESPACES):
        return None
    return importlib.import_module(namespace)


def public_function(namespace: str, name: str) -> Callable[..., object] | None:
    """``namespace.name`` if it is a public function or method (not a class, module or property)."""
    if name.startswith("_"):
        return None
    owner = namespace_object(namespace)
    function = getattr(owner, name, None) if owner is not None else None
    if function is None or isinstance(function, (type, types.ModuleType)) or not callable(function):
        return None
    return function


# Entry points named like an aten operator that call something else: ``torch.nn.functional.unfold`` is
# im2col (not the ``aten::unfold`` of ``Tensor.unfold``); ``Tensor.index`` binds first-class dimensions.
FOREIGN_ENTRY_POINTS = frozenset({*RENAMED_ENTRY_POINTS.values(), (TENSOR_NAMESPACE, "index")})


def entry_points(name: str) -> tuple[tuple[str, str], ...]:
    """Every (namespace, function name) under which the aten operator ``name`` is public, in order."""
    found = [RENAMED_ENTRY_POINTS[name]] if name in RENAMED_ENTRY_POINTS else []
    for namespace, prefix in NAMESPACES:
        point = (namespace, name[len(prefix) :])
        if (
            name.startswith(prefix)
            and point not in FOREIGN_ENTRY_POINTS
            and public_function(*point) is not None
        ):
            found.append(point)
    return tuple(dict.fromkeys(found))


@functools.cache
def function_index() -> dict[int, tuple[str, str]]:
    """id(function) -> (namespace, name) for every public function of every namespace; the first
    namespace in search order wins when one function object appears in several."""
    index: dict[int, tuple[str, str]] = {}
    for namespace, _ in NAMESPACES:
        owner = namespace_object(namespace)
        for name in dir(owner):
            function = public_function(namespace, name)
            if function is not None:
                index.setdefault(id(function), (namespace, name))
    return index


def resolve(namespace: str, name: str) -> Callable[..., object]:
    """The public function ``name`` of ``namespace``; OpperfError with the closest names otherwise."""
    function = public_function(namespace, name)
    if function is not None:
        return function
    known = [n for space, _ in NAMESPACES if space == namespace for n in dir(namespace_object(space))]
    if not known:
        namespaces = ", ".join(space for space, _ in NAMESPACES)
        raise OpperfError(f"unknown PyTorch namespace {namespace!r}; choose one of: {namespaces}")
    raise OpperfError(f"unknown PyTorch operator {namespace}.{name}{suggest(name, known)}")


SPELLINGS: dict[str, str] = {
    **{namespace: namespace for namespace, _ in NAMESPACES},
    **{namespace.removeprefix("torch."): namespace for namespace, _ in NAMESPACES if namespace != "torch"},
    "F": "torch.nn.functional",
}
"""Namespace spellings a selection may qualify a name with (``F`` as in ``import torch.nn.functional
as F``), to the namespace they mean."""

UNQUALIFIED_SEARCH = tuple(namespace for namespace, _ in NAMESPACES)
"""Where an unqualified public name is looked for, in entry-point order: ``logsigmoid`` is
``torch.nn.functional.logsigmoid``."""
