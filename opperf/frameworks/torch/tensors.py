"""Turning input descriptions into PyTorch tensors on a device, from a seeded generator.

Values are drawn on the host from a ``torch.Generator`` seeded per measurement and then moved to the
device, so a seed gives the same inputs on every device.
"""

from __future__ import annotations

import math
from dataclasses import replace

from opperf.results import Alias, InputValue, TensorSpec, is_given_array, is_tensor_list

# Integer tensors that are not indices are drawn from [1, 10): no zero divisors, no overflow.
INTEGER_RANGE = (1, 10)


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
    """The tensor's values on the host: uniform in the spec's range, shaped by its structure."""
    import torch

    target = torch_dtype(spec.dtype or dtype)
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
    if spec.structure is not None:
        values = _structured(values, spec.structure)
    return values.to(target)


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


# Quantized dtypes; such tensors are quantized per tensor from uniform values with this scale and zero
# point.
QUANTIZED_DTYPES = frozenset({"quint8", "qint8", "qint32"})
QUANTIZATION = (0.1, 0)


def make_tensor(spec: TensorSpec, dtype: str, device, generator):
    """A tensor on ``device``, stored as the spec says: dense, CSR, or (for ``row_sparse``, whose zero
    rows MXNet leaves out) COO; a quantized dtype (``quint8``) quantizes float values per tensor."""
    import torch

    if (spec.dtype or dtype) in QUANTIZED_DTYPES:
        values = host_values(replace(spec, dtype="float32"), dtype, generator)
        return torch.quantize_per_tensor(values, *QUANTIZATION, torch_dtype(spec.dtype or dtype)).to(device)
    tensor = host_values(spec, dtype, generator).to(device)
    if spec.storage == "csr":
        return tensor.to_sparse_csr()
    if spec.storage == "row_sparse":
        return tensor.to_sparse()
    return tensor


def materialize(value: InputValue, dtype: str, device, generator) -> object:
    """Tensors for TensorSpecs (and lists for tuples of them); given tensors move to the device,
    detached, so a gradient recorded here never touches the caller's tensor; other values (numbers,
    tuples, strings) pass through."""
    if isinstance(value, TensorSpec):
        return make_tensor(value, dtype, device, generator)
    if is_tensor_list(value):
        return [make_tensor(v, dtype, device, generator) for v in value]
    if is_given_array(value):
        return value.detach().to(device)
    return value


def resolve_alias(value: Alias, source: object) -> object:
    """The tensor (or every ``step``-th tensor of a list) an ``Alias`` input names."""
    return value.select(source) if isinstance(source, list) else source
