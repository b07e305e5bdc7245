"""PyTorch: the aten registry, public entry points, inputs, ``torch.profiler`` timing and session.

What this module itself says needs no PyTorch: which functions and namespaces are PyTorch's, and how
its Python wrappers document a tensor argument.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from opperf.frameworks.contract import Framework


def owns(function: Callable[..., object]) -> bool:
    """Whether ``function`` is PyTorch's: by its module, or, for a ``torch.Tensor`` method (which has
    none), by its qualified name."""
    module = getattr(function, "__module__", None) or getattr(type(function), "__module__", "") or ""
    return module.split(".")[0] == "torch" or getattr(function, "__qualname__", "").startswith("TensorBase.")


def owns_namespace(namespace: str) -> bool:
    """Whether a user-facing namespace name (``torch``, ``torch.nn.functional``) is PyTorch's."""
    return namespace.split(".")[0] == "torch"


FRAMEWORK = Framework(
    name="torch",
    display_name="PyTorch",
    imports="torch",
    backend="backend:TorchBackend",
    documented_tensor=re.compile(r"\bTensor\b"),
    owns=owns,
    owns_namespace=owns_namespace,
    namespaces="torch, torch.nn.functional, torch.linalg, ...",
    capabilities=frozenset({"longtail", "fused", "capture", "in_place"}),
    layouts=frozenset({"transposed", "strided", "channels-last"}),
    stages=("eager", "graph", "compile", "cudagraph", "fused"),
)
"""PyTorch as opperf knows it (``opperf.frameworks.contract``)."""
