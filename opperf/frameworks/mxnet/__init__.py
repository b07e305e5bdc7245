"""MXNet: its registry, namespaces (``mx.nd``, ``mx.np``, ``mx.npx``, ...), inputs, profiler and session.

What this module itself says needs no MXNet: which functions and namespaces are MXNet's, and how its
Python wrappers document a tensor argument (numpydoc ``a : ndarray``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from opperf.frameworks.contract import Framework


def owns(function: Callable[..., object]) -> bool:
    """Whether ``function`` is MXNet's, by its module: ``mxnet...``, or ``ndarray``, which the ~700
    operators MXNet generates for ``mx.nd`` (``mx.nd.exp``, ``mx.nd.Convolution``) say is theirs."""
    module = getattr(function, "__module__", None) or getattr(type(function), "__module__", "") or ""
    return module.split(".")[0] == "mxnet" or module == "ndarray"


def owns_namespace(namespace: str) -> bool:
    """Whether a user-facing namespace name (``mx.nd``, ``mx.np.random``) is MXNet's."""
    return namespace.split(".")[0] in ("mx", "mxnet")


FRAMEWORK = Framework(
    name="mxnet",
    display_name="MXNet",
    imports="mxnet",
    backend="backend:MXNetBackend",
    documented_tensor=re.compile(r"ndarray|NDArray|array_like|mxnet\.ndarray\.array"),
    owns=owns,
    owns_namespace=owns_namespace,
    namespaces="mx.nd, mx.np, mx.npx, ...",
    capabilities=frozenset({"longtail", "fused", "capture", "in_place"}),
    layout_note="MXNet's arrays are always dense row-major, with no strides or memory formats to choose",
    checked_settings=("MXNET_", "OMP_", "KMP_", "DMLC_"),
    stages=("eager", "graph", "fused"),
)
"""MXNet as opperf knows it (``opperf.frameworks.contract``); its Python wrappers document a tensor
as numpydoc ``a : ndarray``."""
