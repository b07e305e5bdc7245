"""A JAX call arranged from a configuration: arguments in signature order, by position up to the
first keyword-only one, a ``*args`` list spread, function names turned into the session's bodies and
``lax.gather``/``lax.scatter*`` dimension numbers (given as name-value pairs) into JAX's records.

Array arguments are the call's ``arrays`` (what ``jax.vjp`` differentiates and ``jax.jit`` traces);
every other value is bound as a constant (static under ``jit``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from opperf.frameworks.jax.bodies import FUNCTION_ARGUMENTS, body
from opperf.frameworks.jax.signatures import arguments

DIMENSION_NUMBERS = (("lax.gather", "GatherDimensionNumbers"), ("lax.scatter", "ScatterDimensionNumbers"))
"""Operators whose ``dimension_numbers`` is a JAX record, by how their names begin (``lax.scatter_add``,
``lax.scatter_sub`` in newer JAX), and the record's name in ``jax.lax``."""


@dataclass(frozen=True)
class Call:
    """``function`` with its constants bound: ``run(*arrays)`` calls it on the array arguments in the
    order ``array_names`` lists them (each a single array or a list of them)."""

    function: Callable[..., object]
    array_names: tuple[str, ...]
    arrays: tuple[Any, ...]
    constants: Mapping[str, object]
    order: tuple[str, ...]
    spread: str | None
    keyword_from: int

    def run(self, *arrays: Any) -> object:
        args, kwargs = self._arguments(arrays)
        return self.function(*args, **kwargs)

    def __call__(self) -> object:
        """The call on its own arrays, its arguments arranged once: a timed call pays for the
        function alone (arranging them each time added 1 us to ``exp`` of 10,000 elements, 4 us)."""
        args, kwargs = self._own_arguments
        return self.function(*args, **kwargs)

    @functools.cached_property
    def _own_arguments(self) -> tuple[list[object], dict[str, object]]:
        return self._arguments(self.arrays)

    def _arguments(self, arrays: tuple[Any, ...]) -> tuple[list[object], dict[str, object]]:
        values = {**self.constants, **dict(zip(self.array_names, arrays, strict=True))}
        args: list[object] = []
        kwargs: dict[str, object] = {}
        for position, name in enumerate(self.order):
            if name == self.spread:  # a list spread; one array given for ``*args`` is one argument
                value = values[name]
                args.extend(cast("list[object]", value) if isinstance(value, (list, tuple)) else [value])
            elif position < self.keyword_from:
                args.append(values[name])
            else:
                kwargs[name] = values[name]
        return args, kwargs


def arrange(
    operator: str,
    function: Callable[..., object],
    values: Mapping[str, object],
    is_array: Callable[[object], bool],
) -> Call:
    """The call of ``function`` with ``values`` (materialised arrays and constants), in its signature's
    order; ``is_array`` tells arrays (and lists of them) from constants."""
    parameters = _parameters(function)
    order = tuple(name for name in parameters if name in values) + tuple(
        n for n in values if n not in parameters
    )
    keyword_from = _positional_count(order, parameters)
    spread = next((n for n, p in parameters.items() if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    constants = {
        name: _constant(operator, name, value) for name, value in values.items() if not is_array(value)
    }
    array_names = tuple(name for name in order if name not in constants)
    return Call(
        function=function,
        array_names=array_names,
        arrays=tuple(values[name] for name in array_names),
        constants=constants,
        order=order,
        spread=spread if spread in values else None,
        keyword_from=keyword_from,
    )


_BY_POSITION = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL,
)


def _positional_count(order: tuple[str, ...], parameters: Mapping[str, inspect.Parameter]) -> int:
    """How many leading arguments of ``order`` go by position: those that are the signature's own
    leading parameters, up to the first gap, keyword-only parameter or ``*args``."""
    names = list(parameters)
    count = 0
    for position, name in enumerate(order):
        if position >= len(names) or names[position] != name or parameters[name].kind not in _BY_POSITION:
            break
        count = position + 1
        if parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            break
    return count


def _parameters(function: Callable[..., object]) -> dict[str, inspect.Parameter]:
    """The function's parameters; a ufunc object's (``jnp.add`` in JAX 0.5 and later, whose own
    signature is ``*args``) are its inputs, by position, named as ``signatures.arguments`` names them."""
    if type(function).__name__ == "ufunc":
        names = [a.name for a in arguments(function)]
        return {n: inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names}
    try:
        return dict(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return {}


def _constant(operator: str, name: str, value: object) -> object:
    """What a configuration's constant is passed as: a body for a function argument, a record for
    gather and scatter dimension numbers, nested lists as tuples (JAX wants hashable static values)."""
    if name in FUNCTION_ARGUMENTS and value is not None:
        return body(value)
    record_name = next((record for start, record in DIMENSION_NUMBERS if operator.startswith(start)), None)
    if name == "dimension_numbers" and record_name is not None and isinstance(value, (tuple, list)):
        import jax.lax

        record = getattr(jax.lax, record_name)
        return record(**{key: _tupled(item) for key, item in value})
    return _tupled(value)


def _tupled(value: object) -> object:
    if isinstance(value, list):
        return tuple(_tupled(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_tupled(v) for v in value)
    return value
