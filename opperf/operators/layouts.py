"""``--layout``: the memory layout of input tensors, where the framework has a choice of them.

The same values can be laid out in memory in other ways, and an operator may take another kernel for
them, or copy them first: PyTorch's own operator benchmark measures strided inputs beside contiguous
ones. A layout touches the dense, unstructured tensors of the ranks it is defined for (``touches``),
and is set on them just before they are made, as a storage (``Storage``): so a record's inputs, and
its row key's, stay those of the contiguous row, and the record's ``layout`` says how it was laid out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from opperf.results.draws import CONTIGUOUS
from opperf.results.measurement import InputValue, Storage, TensorSpec

_STORAGES: dict[str, Storage] = {
    "transposed": "transposed",
    "strided": "sliced",
    "channels-last": "channels_last",
}
_RANKS: dict[str, Callable[[int], bool]] = {
    "transposed": lambda rank: rank >= 2,
    "strided": lambda rank: rank >= 1,
    "channels-last": lambda rank: rank in (4, 5),
}
"""The ranks each layout is defined for."""


def touches(spec: TensorSpec, layout: str) -> bool:
    """Whether ``layout`` applies to ``spec``: a dense, unstructured tensor of a rank it is defined for."""
    if layout == CONTIGUOUS or spec.storage != "default" or spec.structure is not None:
        return False
    return _RANKS[layout](len(spec.shape))


def with_layout(value: InputValue, layout: str) -> InputValue:
    """``value`` (an input: a TensorSpec, a tuple of them, or anything else) with ``layout`` set on
    the tensors it applies to."""
    if isinstance(value, TensorSpec):
        return replace(value, storage=_STORAGES[layout]) if touches(value, layout) else value
    if isinstance(value, tuple) and all(isinstance(item, TensorSpec) for item in value):
        return tuple(with_layout(item, layout) for item in value)
    return value
