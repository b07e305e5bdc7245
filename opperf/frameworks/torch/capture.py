"""Recording the aten operators a PyTorch model calls, as opperf registry operators with their inputs.

A ``TorchDispatchMode`` sees every aten call below autograd, with its schema, so arguments get the
schema's names (``self`` renamed as the registry's Python entry point names it). Names fold into the
registry's operators as the registry folds them (``add_`` into ``add``, ``_adaptive_avg_pool2d`` into
``adaptive_avg_pool2d``); a few private kernels that composite operators dispatch to on the CPU are
folded into the public operator that takes the same named arguments (``PRIVATE_OPERATORS``).

Left out, and counted in the header's ``filtered``: views (the schema says the output aliases an
input without writing it: ``view``, ``transpose``, ``t``, ``select``, ...), factories (no tensor
input: ``zeros``, ``empty``), backward kernels (training mode: opperf measures them as the forward
operator's backward), and anything that is no registry operator. Arguments equal to the schema's
default are left out, and so are dtype, layout, device and memory-format arguments (the replay's
device and tensors' own dtypes stand for them).

Multi-head attention's fused fast path (one opaque call for a whole ``TransformerEncoderLayer`` in
eval mode) is switched off while recording, so the layer's operators are seen one by one.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from opperf.frameworks.base import foreign_model_error
from opperf.frameworks.torch.namespaces import TENSOR_NAMESPACE
from opperf.frameworks.torch.registry import fold_name, is_backward_name, load_registry
from opperf.frameworks.torch.schema import PYTHON_SELF_NAME
from opperf.results.configs import Call, Captured
from opperf.results.measurement import InputValue, TensorSpec, freeze_inputs

if TYPE_CHECKING:
    import torch


def captured_by(mode: str) -> str:
    """How a capture in ``mode`` recorded the calls, for the configs file's header."""
    pass_kind = "training mode: the backward pass unrecorded" if mode == "training" else "inference mode"
    return (
        f"torch TorchDispatchMode over one forward pass (mha fast path off; {pass_kind}); views, "
        "factories, backward kernels and default-valued arguments are filtered"
    )


PRIVATE_OPERATORS: Mapping[str, tuple[str, Mapping[str, InputValue]]] = {
    "_native_batch_norm_legit_no_training": ("batch_norm", {"training": False}),
    "_native_batch_norm_legit": ("batch_norm", {}),
    "_scaled_dot_product_flash_attention_for_cpu": ("scaled_dot_product_attention", {}),
}
"""Private aten kernel -> (public operator taking the same argument names, arguments it needs added)."""

# Views whose schema does not say so: ``_unsafe_view`` is ``view`` without the alias annotation.
UNANNOTATED_VIEWS = frozenset({"_unsafe_view", "lift_fresh", "detach"})

VIEW, FACTORY, BACKWARD, UNREGISTERED = "view", "factory", "backward", "not a registry operator"


@functools.cache
def _overload_arguments() -> dict[str, frozenset[str]]:
    """aten name -> every argument name of any of its overloads."""
    import torch

    names: dict[str, set[str]] = {}
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            names.setdefault(schema.name[6:], set()).update(a.name for a in schema.arguments)
    return {name: frozenset(args) for name, args in names.items()}


def accepted_arguments(op: str) -> frozenset[str] | None:
    """The argument names the registry operator ``op`` takes in any overload of any of its variants,
    as its Python entry point names them; None if ``op`` is no registry operator."""
    info = load_registry().by_name.get(op)
    if info is None:
        return None
    every = _overload_arguments()
    names = {a.name for a in info.arguments}
    for member in info.all_names:
        names |= every.get(member, frozenset())
    return frozenset(_self_name(info.namespaces[0]) if n == "self" else n for n in names)


def _self_name(namespace: str) -> str:
    return "self" if namespace == TENSOR_NAMESPACE else PYTHON_SELF_NAME


def _value(value: object) -> InputValue | None:
    """A call's argument as an opperf input; None for what replay cannot take (dtypes, devices)."""
    import torch

    if isinstance(value, torch.Tensor):
        return TensorSpec(tuple(value.shape), dtype=str(value.dtype).removeprefix("torch."))
    if isinstance(value, (list, tuple)):
        items = [_value(v) for v in value]
        return (
            None
            if any(i is None and v is not None for i, v in zip(items, value, strict=True))
            else tuple(items)
        )
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return None


def _is_view(schema: Any) -> bool:
    returns = schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def describe_call(func: Any, args: tuple, kwargs: dict) -> Call | str:
    """The registry operator and named inputs of one aten call, or why it is filtered."""
    import torch

    schema = func._schema
    name = schema.name.split("::", 1)[1]
    if is_backward_name(name):
        return BACKWARD
    if name in UNANNOTATED_VIEWS or _is_view(schema):
        return VIEW
    flat = [*args, *kwargs.values()]
    if not any(
        isinstance(v, torch.Tensor)
        or (isinstance(v, (list, tuple)) and any(isinstance(t, torch.Tensor) for t in v))
        for v in flat
    ):
        return FACTORY
    registry = load_registry()
    target, extra = PRIVATE_OPERATORS.get(name, (fold_name(name, frozenset(registry.registered_names)), {}))
    info = registry.by_name.get(target)
    if info is None:
        return f"{UNREGISTERED}: {name}"
    given = dict(zip((a.name for a in schema.arguments), args, strict=False)) | kwargs
    inputs: dict[str, InputValue] = {}
    for argument in schema.arguments:
        if argument.name not in given:
            continue
        value = given[argument.name]
        if argument.has_default_value() and _same(value, argument.default_value):
            continue
        converted = _value(value)
        if converted is not None or value is None:
            inputs[_self_name(info.namespaces[0]) if argument.name == "self" else argument.name] = converted
    return Call(info.name, freeze_inputs({**inputs, **extra}))


def _same(value: object, default: object) -> bool:
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    try:
        return (type(value) is type(default) and value == default) or (value is None and default is None)
    except RuntimeError:  # a tensor compared with a default
        return False


def capture(model: Any, inputs: tuple, mode: str) -> Captured:
    """The registry operator calls of one forward pass of ``model`` on ``inputs``, each kept call's
    aten name beside it. In training mode the pass runs in train mode with autograd recording and is
    followed by an unrecorded backward pass; its operators' backward is what a replay's
    ``run_backward`` measures."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    if not isinstance(model, torch.nn.Module):
        raise foreign_model_error("the model", model, "a torch.nn.Module")
    calls: list[Call] = []
    aten_names: list[str] = []
    filtered: Counter = Counter()

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            described = describe_call(func, args, kwargs)
            if isinstance(described, Call):
                calls.append(described)
                aten_names.append(func._schema.name)
            else:
                filtered[described] += 1
            return func(*args, **kwargs)

    training = mode == "training"
    model.train(training)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.set_grad_enabled(training):
            with Recorder():
                outputs = model(*inputs)
            if training:  # the backward pass runs unrecorded: a replay measures it as run_backward
                _first_tensor(outputs).sum().backward()
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    return Captured(tuple(calls), filtered, tuple(aten_names))


def _first_tensor(outputs: Any) -> torch.Tensor:
    import torch

    if isinstance(outputs, torch.Tensor):
        return outputs
    return _first_tensor(outputs[0])
