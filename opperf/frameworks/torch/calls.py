"""A ready-to-run operator call: which inputs go by position and which by keyword.

PyTorch's Python entry points take the schema's arguments in the schema's order, but some of them are
Python wrappers whose parameter names differ (``torch.split(tensor, split_size_or_sections)``), and
Tensor methods take ``self`` as the receiver. Leading arguments therefore go by position, as long as
every earlier argument is given (an omitted nullable argument in between is passed as None); the rest
go by keyword.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opperf.operators.info import Argument


@dataclass(frozen=True)
class Call:
    """``function(*args, **kwargs)`` with materialised inputs."""

    function: Callable[..., object]
    args: tuple
    kwargs: dict

    def __call__(self) -> object:
        return self.function(*self.args, **self.kwargs)

    @classmethod
    def of(cls, function: Callable[..., object], args: tuple, kwargs: dict) -> Call:
        """The call, with the list or tuple that lands on a Python wrapper's ``*args`` spread out
        (``torch.block_diag(*tensors)``, ``Tensor.resize(self, *sizes)``)."""
        index = varargs_position(function)
        if index is not None and len(args) > index and isinstance(args[index], (list, tuple)):
            args = (*args[:index], *args[index], *args[index + 1 :])
        return cls(function, args, kwargs)


def varargs_position(function: Callable[..., object]) -> int | None:
    """The position of a Python function's ``*args`` parameter, or None (builtins take lists whole)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a Python signature
        return None
    kinds = [p.kind for p in parameters]
    return (
        kinds.index(inspect.Parameter.VAR_POSITIONAL) if inspect.Parameter.VAR_POSITIONAL in kinds else None
    )


def takes_keywords(function: Callable[..., object], names: Sequence[str]) -> bool:
    """Whether a Python function takes every one of ``names`` by keyword. Such a wrapper may order its
    parameters unlike the schema (``F.batch_norm(input, running_mean, running_var, weight, bias)``
    against aten's ``(input, weight, bias, running_mean, running_var)``), so it is called by name."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin: schema order applies
        return False
    keywords = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set(names) <= keywords


def arrange(arguments: Sequence[Argument], values: Mapping[str, Any]) -> tuple[tuple, dict]:
    """(positional, keyword) arguments for ``values`` keyed by name, following the schema ``arguments``.

    >>> from opperf.operators.info import ArgKind
    >>> x, k = Argument("x", ArgKind.TENSOR, True), Argument("k", ArgKind.TENSOR, True)
    >>> bias = Argument("bias", ArgKind.TENSOR, False, nullable=True)
    >>> arrange([x, bias, k], {"x": 1, "k": 3})
    ((1, None, 3), {})
    """
    given = [index for index, arg in enumerate(arguments) if arg.name in values and not arg.keyword_only]
    positional: list[object] = []
    for arg in arguments[: given[-1] + 1] if given else ():
        if arg.keyword_only or (arg.name not in values and not arg.nullable):
            break
        positional.append(values.get(arg.name))
    passed = {arg.name for arg in arguments[: len(positional)]}
    return tuple(positional), {name: value for name, value in values.items() if name not in passed}
