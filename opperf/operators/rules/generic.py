"""What every framework's input rules share: the context a rule sees, the error that makes an operator
unbenchmarkable (recorded as a skip with the argument named), and values from an argument's type alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.operators.rules.profiles import SizeProfile
from opperf.results.measurement import InputValue


class NoRuleError(LookupError):
    """No rule can supply a required argument; the message names it."""


@dataclass(frozen=True)
class RuleContext:
    """What a rule may depend on: the operator and this configuration's base shapes."""

    op: OpInfo
    shape: tuple[int, ...]
    pair: tuple[tuple[int, ...], tuple[int, ...]]

    @property
    def rows(self) -> int:
        return self.shape[0]


Rule = Callable[[RuleContext], InputValue]

LIST_LENGTH = 3
"""How many tensors a variable-length tensor list receives."""


def type_default(arg: Argument, context: RuleContext) -> InputValue:
    """A value from the argument's type alone; raises NoRuleError naming the argument otherwise."""
    if arg.kind is ArgKind.INT:
        return 1
    if arg.kind is ArgKind.FLOAT:
        return 0.5
    if arg.kind is ArgKind.BOOL:
        return False
    if arg.kind is ArgKind.SHAPE:
        return context.shape
    if arg.kind is ArgKind.CHOICE:
        real = [c for c in arg.choices if c not in (None, "None")]
        if real:
            return real[0]
    if arg.kind is ArgKind.FLOAT_TUPLE:
        return (0.1,) * LIST_LENGTH
    raise NoRuleError(f"no rule supplies required argument {arg.name!r} ({arg.type_string})")


def rule_name(rule: Callable[..., object]) -> str:
    """Where a rule is written: ``module.function``, a factory's name for the rules it makes."""
    qualified = getattr(rule, "__qualname__", repr(rule)).split(".<locals>")[0]
    return f"{getattr(rule, '__module__', '?')}.{qualified}"


Override = Callable[[RuleContext], Mapping[str, InputValue]]
"""An operator's own values for a configuration: the arguments it replaces or adds."""
Value = Callable[[Argument, RuleContext, bool], InputValue]
"""A framework's value for one required argument of a configuration (``True``: a broadcast pair)."""


def derive_configurations(
    op: OpInfo,
    profile: SizeProfile,
    shapes: tuple[tuple[int, ...], ...],
    override: Override | None,
    value: Value,
) -> list[dict[str, InputValue]]:
    """One configuration per shape: ``value`` of every required argument the operator's ``override``
    does not give, then the override's; binary broadcasting operators on the profile's own shapes take
    its broadcast pairs. Arguments keep the signature's order (``in_argument_order``)."""
    binary = op.category == "binary_broadcast" and shapes == profile.shapes
    pairs = profile.broadcast_pairs if binary else tuple((s, s) for s in shapes)
    configurations = []
    for shape, pair in zip(shapes, pairs, strict=False):
        context = RuleContext(op=op, shape=shape, pair=pair)
        given = override(context) if override else {}
        derived = {
            arg.name: value(arg, context, binary)
            for arg in op.arguments
            if arg.required and arg.name not in given
        }
        configurations.append(in_argument_order(op, {**derived, **given}))
    return configurations


def in_argument_order(op: OpInfo, config: Mapping[str, InputValue]) -> dict[str, InputValue]:
    """A configuration in the operator's argument order (a backend passes leading arguments by
    position); names the signature lacks (a Python wrapper's own) are kept last, by keyword."""
    order = {arg.name: index for index, arg in enumerate(op.arguments)}
    return dict(sorted(config.items(), key=lambda item: order.get(item[0], len(order))))
