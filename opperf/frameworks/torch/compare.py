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


def _dims_as_tuple(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """NumPy's ``axis`` may be one int; PyTorch's ``dims`` (``flip``, ``roll``) is always a tuple."""
    dims = translated.get("dims")
    return {**translated, "dims": (dims,)} if isinstance(dims, int) else translated


def _reversed_dims(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """NumPy's ``transpose`` without ``axes`` reverses them; ``permute`` must be told so."""
    data = translated.get("input")
    if "dims" in translated or not isinstance(data, TensorSpec):
        return translated
    return {**translated, "dims": tuple(reversed(range(len(data.shape))))}


def _flat(value: object) -> object:
    return replace(value, shape=(math.prod(value.shape),)) if isinstance(value, TensorSpec) else value


def _flattened_without_dim(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """NumPy's ``cumsum`` without an axis runs over the array flattened; PyTorch's needs a ``dim``."""
    if "dim" in translated:
        return translated
    return {**translated, "input": _flat(translated.get("input")), "dim": 0}


def _flattened_tensors(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """NumPy's ``vdot`` flattens its arrays; PyTorch's takes 1-D tensors only."""
    return {name: _flat(value) for name, value in translated.items()}


def _boolean_condition(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """NumPy's ``where`` reads any condition as truth values; PyTorch's takes a boolean tensor."""
    condition = translated.get("condition")
    if not isinstance(condition, TensorSpec):
        return translated
    return {**translated, "condition": replace(condition, dtype="bool")}


def _integral_index(source: Mapping[str, Any], translated: dict[str, Any]) -> dict[str, object]:
    """PyTorch's ``take`` takes int64 indices into the flattened input, which NumPy's ``take`` without
    an axis reads too; one with an axis has no counterpart."""
    if translated.get("dim") is not None:
        raise OpperfError("take along an axis has no torch.take counterpart (it reads the input flattened)")
    index = translated.get("index")
    if not isinstance(index, TensorSpec):
        return translated
    size = math.prod(translated["input"].shape) if isinstance(translated.get("input"), TensorSpec) else 1
    bounded = replace(index, dtype="int64", integral=True, low=0, high=size)
    return {key: value for key, value in {**translated, "index": bounded}.items() if key != "dim"}


def _named(name: str, renames: Mapping[str, str] | None = None, **settings: Any) -> Counterpart:
    """``torch.<name>``, with ``axis`` renamed ``dim`` and ``renames`` besides."""
    return Counterpart("torch", name, renames={**DEFAULT_RENAMES, **(renames or {})}, **settings)


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
    # NumPy's names (``mx.np``, ``jnp`` first), where PyTorch's arguments are named otherwise
    "arange": _named("arange", renames={"stop": "end"}),
    "linspace": _named("linspace", renames={"stop": "end", "num": "steps"}),
    "logspace": _named("logspace", renames={"stop": "end", "num": "steps"}),
    "broadcast_to": _named("broadcast_to", renames={"shape": "size"}),
    "clip": _named("clip", renames={"a_min": "min", "a_max": "max"}),
    "empty": _named("empty", renames={"shape": "size"}),
    "ones": _named("ones", renames={"shape": "size"}),
    "zeros": _named("zeros", renames={"shape": "size"}),
    "full": _named("full", renames={"shape": "size"}),
    "eye": _named("eye", renames={"N": "n", "M": "m"}),
    "flip": _named("flip", renames={"axis": "dims"}, adapt=_dims_as_tuple),
    "reshape": _named("reshape", renames={"newshape": "shape"}),
    "roll": _named("roll", renames={"shift": "shifts", "axis": "dims"}, adapt=_dims_as_tuple),
    "swapaxes": _named("swapaxes", renames={"axis1": "axis0", "axis2": "axis1"}),
    "tile": _named("tile", renames={"reps": "dims"}),
    "transpose": _named("permute", renames={"axes": "dims"}, adapt=_reversed_dims),
    "cumsum": _named("cumsum", adapt=_flattened_without_dim),
    "vdot": _named("vdot", adapt=_flattened_tensors),
    "split": _named("chunk", renames={"indices_or_sections": "chunks"}),
    "hsplit": _named("hsplit", renames={"indices_or_sections": "sections"}),
    "vsplit": _named("vsplit", renames={"indices_or_sections": "sections"}),
    "dsplit": _named("dsplit", renames={"indices_or_sections": "sections"}),
    "einsum": _named("einsum", renames={"subscripts": "equation", "operands": "tensors"}),
    "round_": _named("round"),
    "where": _named("where", adapt=_boolean_condition),
    "take": _named("take", renames={"indices": "index"}, adapt=_integral_index),
}
"""The calls that differ, by the operator's name in the first namespace (``mx.nd``'s, or NumPy's)."""


def answers(counterpart: Counterpart, namespace: str) -> bool:
    """Whether a listed counterpart is how ``namespace`` (any of PyTorch's) calls the operator: yes."""
    return True
