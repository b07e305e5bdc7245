"""How ``opperf compare`` calls an operator of the first namespace (``mx.nd``) in PyTorch, where the
names or arguments differ (``FullyConnected`` is ``torch.nn.functional.linear``); any other operator
is called by its name, with ``axis`` renamed ``dim``. Framework-free: imports nothing of PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from opperf.operators.counterparts import Counterpart
from opperf.results.measurement import TensorSpec
from opperf.utils.errors import OpperfError

DEFAULT_RENAMES: Mapping[str, str] = {"axis": "dim"}
"""The renames of an operator called by its own name."""
_WINDOW = {"kernel": "kernel_size", "pad": "padding", "dilate": "dilation", "num_group": "groups"}
_INFERRED = frozenset({"num_hidden", "num_filter", "no_bias", "flatten", "layout", "cudnn_off"})
_BATCH_NORM = {
    "gamma": "weight",
    "beta": "bias",
    "moving_mean": "running_mean",
    "moving_var": "running_var",
}


def _spatial_dims(configuration: Mapping[str, Any]) -> int:
    kernel = configuration.get("kernel", (1, 1))
    return len(kernel) if isinstance(kernel, (tuple, list)) else 1


def _convolution(configuration: Mapping[str, Any]) -> str:
    return f"conv{_spatial_dims(configuration)}d"


def _pooling(configuration: Mapping[str, Any]) -> str:
    if configuration.get("global_pool"):
        raise OpperfError("global pooling has no torch.nn.functional counterpart with the same inputs")
    kind = configuration.get("pool_type", "max")
    if kind not in ("max", "avg"):
        raise OpperfError(f"{kind!r} pooling has no torch.nn.functional counterpart")
    return f"{kind}_pool{_spatial_dims(configuration)}d"


def _flattened_data(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """FullyConnected with ``flatten=True`` (its default) reads data of (N, C, H, W) as (N, C*H*W);
    ``linear`` applies to the last axis only, so it gets the data flattened as MXNet flattens it."""
    data = source.get("data")
    if not source.get("flatten", True) or not isinstance(data, TensorSpec) or len(data.shape) <= 2:
        return translated
    flat = (data.shape[0], math.prod(data.shape[1:]))
    return {**translated, "input": replace(data, shape=flat)}


def _named(name: str, **settings: Any) -> Counterpart:
    return Counterpart("torch", name, renames=DEFAULT_RENAMES, **settings)


COUNTERPARTS: Mapping[str, Counterpart] = {
    "broadcast_add": _named("add"),
    "elemwise_add": _named("add"),
    "subtract": _named("sub"),
    "multiply": _named("mul"),
    "broadcast_mul": _named("mul"),
    "divide": _named("div"),
    "dot": _named("matmul", drop=frozenset({"transpose_a", "transpose_b"})),
    "batch_dot": Counterpart("torch", "bmm"),
    "softmax": _named("softmax", extra={"dim": -1}),
    "relu": Counterpart("torch", "relu"),
    "sigmoid": Counterpart("torch", "sigmoid"),
    "FullyConnected": Counterpart("torch.nn.functional", "linear", drop=_INFERRED, adapt=_flattened_data),
    "Convolution": Counterpart(
        "torch.nn.functional", _convolution, renames=_WINDOW, drop=_INFERRED | {"kernel"}
    ),
    "Pooling": Counterpart(
        "torch.nn.functional",
        _pooling,
        renames=_WINDOW,
        drop=frozenset({"pool_type", "pooling_convention", "cudnn_off", "layout"}),
    ),
    "BatchNorm": Counterpart(
        "torch.nn.functional",
        "batch_norm",
        renames=_BATCH_NORM,
        drop=frozenset({"fix_gamma", "use_global_stats", "axis", "cudnn_off"}),
        extra={"training": True},
    ),
}
"""The calls that differ, by the operator's ``mx.nd`` name."""


def answers(counterpart: Counterpart, namespace: str) -> bool:
    """Whether a listed counterpart is how ``namespace`` (any of PyTorch's) calls the operator: yes."""
    return True
