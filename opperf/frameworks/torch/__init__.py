"""PyTorch: the aten registry, public entry points, inputs, ``torch.profiler`` timing and session.

What this module itself says needs no PyTorch: which functions and namespaces are PyTorch's, and how
its Python wrappers document a tensor argument.
"""

from __future__ import annotations

import re
from collections.abc import Callable

IMPORTS = "torch"
"""The module the framework is imported as: without it, opperf names the extra to install."""

DOCUMENTED_TENSOR = re.compile(r"\bTensor\b")
"""A documented parameter type that means a tensor."""


def owns(function: Callable[..., object]) -> bool:
    """Whether ``function`` is PyTorch's: by its module, or, for a ``torch.Tensor`` method (which has
    none), by its qualified name."""
    module = getattr(function, "__module__", None) or getattr(type(function), "__module__", "") or ""
    return module.split(".")[0] == "torch" or getattr(function, "__qualname__", "").startswith("TensorBase.")


def owns_namespace(namespace: str) -> bool:
    """Whether a user-facing namespace name (``torch``, ``torch.nn.functional``) is PyTorch's."""
    return namespace.split(".")[0] == "torch"
