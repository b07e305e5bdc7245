"""Turning input descriptions into PyTorch tensors on a device, from a seeded generator.

Values are drawn on the host from a ``torch.Generator`` seeded per measurement and then moved to the
device, so a seed gives the same inputs on every device.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from opperf.operators.values import INTEGER_RANGE, boxes, distributed
from opperf.results.measurement import (
    UNIFORM_POSITIVE,
    Alias,
    InputValue,
    TensorSpec,
    is_given_array,
    is_tensor_list,
)
from opperf.utils.draws import DrawCache, GeneratorState, drawn

if TYPE_CHECKING:
    import torch


def torch_constant(name: str):
    """A dtype, layout or memory format by name: ``"float32"`` -> ``torch.float32``."""
    import torch

    constant = getattr(torch, name, None)
    if not isinstance(constant, (torch.dtype, torch.layout, torch.memory_format)):
        raise ValueError(f"torch has no dtype, layout or memory format named {name!r}")
    return constant


def torch_dtype(name: str):
    """``"float32"`` -> ``torch.float32``; raises ValueError for a name torch has no dtype for."""
    import torch

    dtype = torch_constant(name)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"torch has no dtype {name!r}")
    return dtype


def is_float_tensor(value: object) -> bool:
    """A floating-point or complex tensor: what autograd can differentiate."""
    import torch

    return isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())


def host_values(spec: TensorSpec, dtype: str, generator):
    """The tensor's values on the host: in its distribution (uniform in the spec's range unless
    ``--values`` set another), shaped by its structure."""
    import torch

    target = torch_dtype(spec.dtype or dtype)
    if spec.values != UNIFORM_POSITIVE:
        return _distributed(spec, dtype, generator).to(target)
    if spec.structure == "sorted_unique":
        low, high = int(spec.low), int(spec.high)
        chosen = torch.randperm(high - low, generator=generator)[: math.prod(spec.shape)] + low
        return chosen.sort().values.reshape(spec.shape).to(target)
    if target == torch.bool:
        return torch.rand(spec.shape, generator=generator) < 0.5
    if not spec.integral and not (target.is_floating_point or target.is_complex):
        return torch.randint(*INTEGER_RANGE, spec.shape, generator=generator).to(target)
    values = _uniform(spec, generator)
    if spec.integral:
        values = values.floor()
    if target.is_complex:
        values = torch.complex(values, _uniform(spec, generator))
    if spec.structure == "boxes":
        values = boxes(values, spec.low, spec.high, torch.cat)
    elif spec.structure is not None:
        values = _structured(values, spec.structure)
    if spec.density < 1:
        values = _sparsified(values, spec, generator)
    return values.to(target)


def _distributed(spec: TensorSpec, dtype: str, generator):
    """Values in the spec's ``--values`` distribution (``opperf.operators.values.distributed``), both
    parts of a complex tensor alike; sparse where the spec is."""
    import torch

    def uniform():
        return torch.rand(spec.shape, generator=generator, dtype=torch.float64)

    values = distributed(spec, spec.dtype or dtype, uniform, torch)
    if torch_dtype(spec.dtype or dtype).is_complex:
        values = torch.complex(values, distributed(spec, spec.dtype or dtype, uniform, torch))
    return _sparsified(values, spec, generator) if spec.density < 1 else values


def _sparsified(values, spec: TensorSpec, generator):
    """``values`` with all but a ``density`` fraction of the elements (CSR, CSC) or rows zeroed."""
    import torch

    whole_rows = spec.storage == "row_sparse"
    kept_shape = values.shape[:1] + (1,) * (values.dim() - 1) if whole_rows else values.shape
    kept = torch.rand(kept_shape, generator=generator, dtype=torch.float64) < spec.density
    return values * kept


def _uniform(spec: TensorSpec, generator):
    import torch

    values = torch.rand(spec.shape, generator=generator, dtype=torch.float64)
    return values * (spec.high - spec.low) + spec.low


def _structured(values, structure: str):
    """Square matrices (over the last two axes) that factorizations and inverses accept."""
    import torch

    n = values.shape[-1]
    identity = n * torch.eye(n, dtype=values.dtype)
    if structure == "spd":
        return values @ values.transpose(-1, -2) + identity
    return values.tril() + identity


# Quantized dtypes; such tensors are quantized from uniform values with this scale and zero point, per
# tensor, or per channel (every channel alike) for the ``per_channel`` storage.
QUANTIZED_DTYPES = frozenset({"quint8", "qint8", "qint32"})
QUANTIZATION = (0.1, 0)


TORCH_STATE = GeneratorState(
    key=lambda generator: generator.get_state().numpy().tobytes(),
    read=lambda generator: generator.get_state(),
    restore=lambda generator, state: generator.set_state(state),
)


def host_draws() -> DrawCache:
    """A cache of host values drawn from torch generators (``opperf.utils.draws``): callers get a
    copy (an operator may change its inputs in place, and a tensor on the CPU is not copied to the
    device)."""
    return DrawCache(TORCH_STATE, size=lambda values: values.element_size() * values.numel(), copy=_clone)


def _clone(values):
    return values.clone()


def _drawn(spec: TensorSpec, dtype: str, generator, draws: DrawCache | None):
    """``host_values``, through ``draws`` when given."""
    return drawn(draws, (spec, dtype), generator, lambda: host_values(spec, dtype, generator))


def make_tensor(spec: TensorSpec, dtype: str, device, generator, draws: DrawCache | None = None):
    """A tensor on ``device``, stored as the spec says (``STORAGES``); a quantized dtype (``quint8``)
    quantizes float values, per tensor, or per channel along dimension 0 for ``per_channel``.
    ``draws`` remembers values drawn before."""
    import torch

    target = spec.dtype or dtype
    if target in QUANTIZED_DTYPES:
        values = _drawn(replace(spec, dtype="float32"), dtype, generator, draws)
        scale, zero_point = QUANTIZATION
        if spec.storage != "per_channel":
            return torch.quantize_per_tensor(values, scale, zero_point, torch_dtype(target)).to(device)
        channels = values.shape[0]
        scales = torch.full((channels,), scale, dtype=torch.float64)
        zero_points = torch.full((channels,), zero_point, dtype=torch.int64)
        return torch.quantize_per_channel(values, scales, zero_points, 0, torch_dtype(target)).to(device)
    if spec.storage not in STORAGES:
        raise ValueError(f"storage {spec.storage!r} needs a quantized dtype, not {target!r}")
    return STORAGES[spec.storage](_drawn(spec, dtype, generator, draws).to(device))


def _fbgemm_packed(tensor):
    """A (out, in) weight matrix packed for FBGEMM's product: int8 values as
    ``fbgemm_pack_quantized_matrix`` packs them, floating-point ones as half precision
    (``fbgemm_pack_gemm_matrix_fp16``). The result is an opaque byte tensor."""
    import torch

    if tensor.is_floating_point():
        return torch.fbgemm_pack_gemm_matrix_fp16(tensor)
    return torch.fbgemm_pack_quantized_matrix(tensor)


def _nested(tensor):
    """A nested (jagged) tensor of the rows (dimension 0) of ``tensor``, flattened: row i keeps its
    first 1 + i * (width - 1) // (rows - 1) elements, so lengths grow evenly from 1 to the full width
    and padding it back to a dense tensor fills about half."""
    import torch

    rows = tensor.reshape(tensor.shape[0], -1)
    count, width = rows.shape
    lengths = [1 + i * (width - 1) // max(1, count - 1) for i in range(count)]
    return torch.nested.nested_tensor([row[:length] for row, length in zip(rows, lengths, strict=True)])


def _sliced(tensor):
    """The same values as a non-contiguous view: every second element along the last axis of a
    tensor twice as wide."""
    import torch

    wide = torch.stack((tensor, torch.zeros_like(tensor)), dim=-1).flatten(-2)
    return wide[..., ::2]


def _unchanged(tensor):
    return tensor


def _transposed(tensor):
    """The same values as the transpose of a contiguous tensor: column-major over the last two axes."""
    return tensor.transpose(-1, -2).contiguous().transpose(-1, -2)


def _channels_last(tensor):
    """The same values in channels-last memory (NHWC for rank 4, NDHWC for rank 5)."""
    import torch

    memory_format = torch.channels_last if tensor.dim() == 4 else torch.channels_last_3d
    return tensor.contiguous(memory_format=memory_format)


# Storage -> how a dense tensor of the spec's values becomes it (row_sparse, MXNet's storage that
# leaves zero rows out, is COO).
STORAGES = {
    "default": _unchanged,
    "csr": lambda tensor: tensor.to_sparse_csr(),
    "csc": lambda tensor: tensor.to_sparse_csc(),
    "row_sparse": lambda tensor: tensor.to_sparse(),
    "mkldnn": lambda tensor: tensor.to_mkldnn(),
    "fbgemm_packed": _fbgemm_packed,
    "nested": _nested,
    "sliced": _sliced,
    "transposed": _transposed,
    "channels_last": _channels_last,
}


def materialize(value: InputValue, dtype: str, device, generator, draws: DrawCache | None = None) -> object:
    """Tensors for TensorSpecs (and lists for tuples of them); given tensors move to the device,
    detached, so a gradient recorded here never touches the caller's tensor; other values (numbers,
    tuples, strings) pass through."""
    if isinstance(value, TensorSpec):
        return make_tensor(value, dtype, device, generator, draws)
    if is_tensor_list(value):
        return [make_tensor(v, dtype, device, generator, draws) for v in value]
    if is_given_array(value):
        return cast("torch.Tensor", value).detach().to(device)  # a given array here is a tensor
    return value


def resolve_alias(value: Alias, source: object) -> object:
    """The tensor (or every ``step``-th tensor of a list) an ``Alias`` input names."""
    return value.select(source) if isinstance(source, list) else source
