"""The bytes a PyTorch operator's outputs take, inferred from its inputs' shapes without running it.

The call runs once on the meta device: tensors there have shapes and dtypes but no data, and every
operator with a meta kernel (or a Python decomposition) computes its outputs' shapes only. ``vander``
of a 65,536-vector is known to make a 32 GiB matrix before anything is allocated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from opperf.frameworks.torch.tensors import QUANTIZED_DTYPES, torch_dtype
from opperf.results.measurement import InputValue, TensorSpec, is_given_array, is_tensor_list

if TYPE_CHECKING:
    import torch


class NoShapeInferenceError(ValueError):
    """An input the meta device cannot stand in for (a sparse or quantized tensor)."""


def meta_input(value: InputValue, dtype: str) -> object:
    """``value`` on the meta device: an empty tensor of each TensorSpec's shape and dtype, a given
    tensor moved there; other values unchanged."""
    import torch

    def empty(spec: TensorSpec):
        target = spec.dtype or dtype
        if (
            spec.storage not in ("default", "sliced", "transposed", "channels_last")
            or target in QUANTIZED_DTYPES
        ):
            raise NoShapeInferenceError(f"{spec.storage} {target} tensor")
        return torch.empty(spec.shape, dtype=torch_dtype(target), device="meta")

    if isinstance(value, TensorSpec):
        return empty(value)
    if is_tensor_list(value):
        return [empty(v) for v in value]
    if is_given_array(value):
        return cast("torch.Tensor", value).detach().to("meta")  # a given array here is a tensor
    return value


def output_bytes(call) -> int | None:
    """Bytes of the tensors ``call`` (over meta inputs) returns that are not its inputs or views of
    them, or None where the meta device cannot run it (shapes that depend on values, no meta kernel)."""
    import torch
    from torch.utils._pytree import tree_leaves

    inputs = [v for v in tree_leaves((call.args, call.kwargs)) if isinstance(v, torch.Tensor)]
    given = {t.untyped_storage()._cdata for t in inputs}
    try:
        with torch.no_grad():
            outputs = call()
        tensors = [t for t in tree_leaves(outputs) if isinstance(t, torch.Tensor)]
        if any(t.device.type != "meta" for t in tensors):
            return None  # a function that made tensors of its own: its outputs are not inferred
        storages = {t.untyped_storage()._cdata: t.untyped_storage().nbytes() for t in tensors}
    except Exception:  # no inference for this call: the caller falls back to input size
        return None
    return sum(size for storage, size in storages.items() if storage not in given)
