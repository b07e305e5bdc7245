"""Recording the ``jax.lax`` operators a JAX function calls, from its jaxpr, as registry operators
with their inputs.

``jax.make_jaxpr`` traces the function once on its example inputs, running nothing; each equation is
one primitive applied to arrays (``dot_general``, ``add``, ``conv_general_dilated``), the level of
``jax.lax``, whose public functions are registry operators (``lax.dot_general``). Equations that
call a traced function (``jnp`` functions under ``jit``, ``custom_jvp`` rules such as ``nn.relu``)
are entered, so what they run is recorded. An equation's array operands take the operator's array
arguments in order (its list argument the rest: ``lax.select_n``'s cases); its parameters take the
arguments of the same name, unless they equal the function's default.

Left out, and counted in the header's ``filtered``: equations with no traced array operand (a
constant made from literals: ``broadcast_in_dim`` of ``1.0``, ``iota``), primitives with no public
``jax.lax`` function, and those whose parameters do not fill the function's required arguments
(``argmax``'s primitive names its axis ``axes``).
"""

from __future__ import annotations

import enum
import inspect
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from opperf.frameworks.base import foreign_model_error
from opperf.frameworks.jax.entry_points import resolve
from opperf.frameworks.jax.registry import load_registry
from opperf.operators.info import ArgKind, OpInfo
from opperf.results.configs import Call, Captured
from opperf.results.measurement import InputValue, TensorSpec, freeze_inputs

ENTERED = {"pjit": "jaxpr", "closed_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
           "custom_vjp_call_jaxpr": "fun_jaxpr", "remat": "jaxpr", "checkpoint": "jaxpr"}  # fmt: skip
"""Primitives that call a traced function, and the parameter holding its jaxpr: recorded by what
they run."""

CONSTANT, UNREGISTERED, ARGUMENTS = "constant", "not a registry operator", "arguments differ"
SPATIAL = "HWD"
"""Letters for the spatial dimensions of a convolution's dimension numbers written as text."""


def captured_by(mode: str) -> str:
    """How a capture recorded the calls, for the configs file's header."""
    return (
        "jax.make_jaxpr over one forward pass (nothing run); jitted and custom-derivative functions "
        "entered; constants, primitives without a jax.lax function and default-valued arguments "
        f"filtered ({mode} mode: JAX functions have none, a replay measures the backward pass)"
    )


def accepted_arguments(op: str) -> frozenset[str] | None:
    """The argument names the JAX operator ``op`` (canonical or alias) takes; None if unknown: what a
    configs file may give it."""
    info = load_registry().by_name.get(op)
    return frozenset(a.name for a in info.arguments) if info is not None else None


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of ``jaxpr`` that applies a primitive, those of the functions it calls in turn
    (``ENTERED``), in order."""
    for equation in jaxpr.eqns:
        inner = ENTERED.get(equation.primitive.name)
        if inner is not None and inner in equation.params:
            called = equation.params[inner]
            yield from equations(getattr(called, "jaxpr", called))
        else:
            yield equation


def capture(model: Callable[..., object], inputs: tuple, mode: str) -> Captured:
    """The registry operator calls of ``model(*inputs)``, traced once, each kept call's primitive
    name beside it."""
    import jax
    import numpy as np

    for leaf in jax.tree_util.tree_leaves(inputs):
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
            raise foreign_model_error("an example input", leaf, "an array JAX takes")
    traced = jax.make_jaxpr(model)(*inputs)
    calls: list[Call] = []
    names: list[str] = []
    filtered: Counter = Counter()
    for equation in equations(traced.jaxpr):
        described = describe_equation(equation)
        if isinstance(described, Call):
            calls.append(described)
            names.append(equation.primitive.name)
        else:
            filtered[described] += 1
    return Captured(tuple(calls), filtered, tuple(names))


def describe_equation(equation: Any) -> Call | str:
    """The registry operator and named inputs of one equation, or why it is left out."""
    if all(_is_literal(v) for v in equation.invars):
        return CONSTANT
    name = equation.primitive.name
    info = load_registry().by_name.get(f"lax.{name}")
    if info is None:
        return f"{UNREGISTERED}: {name}"
    inputs = {**_operands(info, equation.invars), **_parameters(info, equation.params)}
    if not {a.name for a in info.arguments if a.required} <= set(inputs):
        return f"{ARGUMENTS}: {name}"
    return Call(info.name, freeze_inputs(inputs))


def _is_literal(operand: Any) -> bool:
    """A constant written into the jaxpr (``1.0``), not an array traced from the inputs."""
    return hasattr(operand, "val")


def _operands(info: OpInfo, operands: list[Any]) -> dict[str, InputValue]:
    """The equation's arrays as the operator's array arguments, in order; a list argument takes the
    rest."""
    described: dict[str, InputValue] = {}
    remaining = [_tensor(v.aval) for v in operands]
    for argument in (a for a in info.arguments if a.is_tensor):
        if not remaining:
            break
        if argument.kind is ArgKind.TENSOR_LIST:
            described[argument.name], remaining = tuple(remaining), []
        else:
            described[argument.name] = remaining.pop(0)
    return described


def _tensor(aval: Any) -> TensorSpec:
    return TensorSpec(tuple(int(d) for d in aval.shape), dtype=str(np.dtype(aval.dtype)))


def _parameters(info: OpInfo, parameters: Mapping[str, Any]) -> dict[str, InputValue]:
    """The equation's parameters the operator's function takes by the same name, as plain values,
    left out where they equal its default."""
    defaults = _defaults(info)
    taken = {a.name for a in info.arguments if not a.is_tensor}
    described: dict[str, InputValue] = {}
    for name, value in parameters.items():
        if name not in taken:
            continue
        plain = _plain(name, value)
        if plain is not None and not (name in defaults and defaults[name] == plain):
            described[name] = plain
    return described


def _defaults(info: OpInfo) -> dict[str, object]:
    try:
        parameters = inspect.signature(resolve("jax.lax", info.name.removeprefix("lax."))).parameters
    except (TypeError, ValueError):
        return {}
    return {n: _plain(n, p.default) for n, p in parameters.items() if p.default is not p.empty}


GATHER_MODES = {"CLIP": "clip", "FILL_OR_DROP": "fill", "PROMISE_IN_BOUNDS": "promise_in_bounds"}
"""A gather's or scatter's mode as ``lax`` takes it written (``GatherScatterMode.from_any``)."""


def _plain(name: str, value: Any) -> InputValue | None:
    """A parameter as a configs file holds it: numbers, text, tuples; a dtype by name; a
    convolution's dimension numbers as text (``NHWC``); None for what has no plain form."""
    if hasattr(value, "lhs_spec") and hasattr(value, "out_spec"):
        return _dimension_text(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # gather and scatter dimension numbers
        fields = tuple((field, _plain(field, getattr(value, field))) for field in value._fields)
        return None if any(plain is None for _, plain in fields) else fields
    if isinstance(value, enum.Enum) and type(value).__name__ == "GatherScatterMode":
        return GATHER_MODES.get(value.name)
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return str(np.dtype(value))
    if isinstance(value, (list, tuple)):
        items = tuple(_plain(name, v) for v in value)
        return None if any(i is None and v is not None for i, v in zip(items, value, strict=True)) else items
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    return None


def _dimension_text(numbers: Any) -> tuple[str, str, str]:
    """``ConvDimensionNumbers`` (each operand's dimensions by position) as ``lax`` reads it written:
    (``NHWC``, ``HWIO``, ``NHWC``)."""

    def text(spec: tuple[int, ...], first: str, second: str) -> str:
        letters = [""] * len(spec)
        for role, position in zip((first, second, *SPATIAL), spec, strict=False):
            letters[position] = role
        return "".join(letters)

    return (
        text(numbers.lhs_spec, "N", "C"),
        text(numbers.rhs_spec, "O", "I"),
        text(numbers.out_spec, "N", "C"),
    )
