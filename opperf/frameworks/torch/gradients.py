"""Which inputs take a gradient, and whether an operator's backward pass runs.

The answer comes from running the operator: float inputs require grad, the first forward pass is
recorded, and a backward pass is tried on every output that has a ``grad_fn``. Inputs autograd refuses a
gradient (batch norm's running statistics, a loss's target) stop taking one and the pass is repeated;
any other error while recording leaves the operator without a backward pass, with the error as reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from opperf.frameworks.torch.calls import Call
from opperf.frameworks.torch.errors import describe_error

# PyTorch's message for an input that cannot require grad, naming the argument.
_REFUSED = re.compile(r"not differentiable with respect to argument '(\w+)'")

NOT_DIFFERENTIABLE = "no output has a grad_fn: the operator is not differentiable (integer or boolean output)"


@dataclass(frozen=True)
class Recording:
    """What the first forward pass found: the inputs a backward pass differentiates (``names``) and
    the gradients it starts from (``seeds``, one per differentiable output), or why there is none."""

    names: tuple[str, ...] = ()
    seeds: tuple = ()
    reason: str | None = None

    @property
    def differentiable(self) -> bool:
        return self.reason is None

    def leaves(self, inputs: Mapping[str, tuple]) -> tuple:
        """The tensors of ``inputs`` (name -> tensors, of any input set) that take a gradient."""
        return tuple(t for name in self.names for t in inputs[name])


def require_grad(tensors: tuple, flag: bool = True) -> None:
    for tensor in tensors:
        tensor.requires_grad_(flag)


def forward(call: Call, record: bool) -> object:
    """One forward pass, recorded for autograd only when a backward pass will follow."""
    import torch

    with torch.set_grad_enabled(record):
        return call()


def differentiable_outputs(outputs: object) -> tuple:
    """The output tensors autograd can differentiate: those with a ``grad_fn``."""
    return tuple(t for t in _flatten(outputs) if t.grad_fn is not None)


def _flatten(outputs: object) -> list:
    import torch

    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if isinstance(outputs, (list, tuple)):
        return [t for item in outputs for t in _flatten(item)]
    return []


def seed_gradient(output):
    """The gradient a backward pass starts from: ones for a strided output; for a sparse or opaque
    layout, which ``ones_like`` does not support, a copy of the output (same layout and pattern)."""
    import torch

    return torch.ones_like(output) if output.layout == torch.strided else output.detach().clone()


def first_pass(call: Call, leaves: Mapping[str, tuple]) -> Recording:
    """Run ``call`` once, recorded for autograd with every input of ``leaves`` (name -> its tensors)
    that autograd accepts, and try its backward pass. The inputs that take part keep
    ``requires_grad``."""
    remaining = dict(leaves)
    while remaining:
        tensors = tuple(t for group in remaining.values() for t in group)
        require_grad(tensors)
        try:
            outputs = forward(call, record=True)
        except RuntimeError as error:
            require_grad(tensors, False)
            refused = _refused_argument(error)
            if refused not in remaining:
                forward(call, record=False)
                return Recording(reason=f"recording for backward failed: {describe_error(error)}")
            del remaining[refused]
            continue
        heads = differentiable_outputs(outputs)
        reason = _probe(heads, tensors)
        if reason is not None:
            require_grad(tensors, False)
            return Recording(reason=reason)
        return Recording(names=tuple(remaining), seeds=tuple(seed_gradient(h) for h in heads))
    forward(call, record=False)
    return Recording(reason="autograd refuses a gradient for every floating-point input")


def _refused_argument(error: RuntimeError) -> str | None:
    match = _REFUSED.search(str(error))
    return match.group(1) if match else None


def _probe(heads: tuple, leaves: tuple) -> str | None:
    """Run one backward pass; None if it works, else why the operator has no usable gradient."""
    import torch

    if not heads:
        return NOT_DIFFERENTIABLE
    try:
        torch.autograd.grad(heads, leaves, [seed_gradient(h) for h in heads], allow_unused=True)
    except Exception as error:
        return f"backward failed: {describe_error(error)}"
    return None


def backward_pass(outputs: object, leaves: tuple, seeds: tuple) -> Callable[[], object]:
    """The backward pass of one forward pass's ``outputs``, as a call: the gradients of ``leaves``,
    returned rather than accumulated into ``.grad``."""
    import torch

    heads = differentiable_outputs(outputs)
    return lambda: torch.autograd.grad(heads, leaves, seeds, allow_unused=True)
