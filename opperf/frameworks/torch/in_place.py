"""PyTorch's in-place forms (``--in-place``): the ``Tensor`` method that writes its result into its
first argument (``abs_``, ``add_``), which the registry folds into its operator as an alias.

Called again and again, an in-place form would compute on its own earlier results (``exp_``'s values
run to infinity within a few hundred calls, and are then timed on its infinities), so the session
copies the overwritten tensor back from its first values after every pass, outside its timing
(``Passes.restore``). There is no backward pass: autograd refuses to differentiate a leaf
tensor an operator overwrites.
"""

from __future__ import annotations

from collections.abc import Callable

from opperf.operators.info import OpInfo

RESHAPING = frozenset(
    {
        "as_strided", "detach", "resize", "resize_as", "resize_as_sparse", "set", "sparse_resize",
        "sparse_resize_and_clear", "squeeze", "swapaxes", "swapdims", "t", "transpose", "unsqueeze",
    }
)  # fmt: skip
"""Operators whose in-place form changes the tensor's shape, strides or storage rather than its
values (``squeeze_``, ``set_``): there are no values to compute in place, nor any to copy back."""


def form(op: OpInfo) -> str | None:
    """The name of ``op``'s in-place form, or None where it has none that computes values."""
    name = f"{op.name}_"
    return name if name in op.aliases and op.name not in RESHAPING else None


def method(name: str) -> Callable[..., object]:
    """The ``Tensor`` method of the in-place form ``name`` (``abs_``); its first argument is the
    tensor it overwrites."""
    import torch

    return getattr(torch.Tensor, name)
