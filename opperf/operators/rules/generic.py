"""What every framework's input rules share: the context a rule sees, the error that makes an operator
unbenchmarkable (recorded as a skip with the argument named), and values from an argument's type alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opperf.operators.info import ArgKind, Argument, OpInfo
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
