"""A JAX function's arguments, read from its Python signature: names, defaults, and the kind each
annotation (``ArrayLike``, ``int | None``, ``Sequence[ArrayLike]``) or, unannotated, its name says."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable

from opperf.operators.info import ArgKind, Argument

ARRAY_NAMES = frozenset(
    {
        "x", "y", "a", "b", "x1", "x2", "operand", "arr", "ary", "m", "v", "p", "q", "z", "a1", "a2",
        "ar1", "ar2", "array", "lhs", "rhs", "values", "condition", "element", "test_elements", "xp",
        "fp", "c", "u", "w", "k", "n", "s", "exponent", "keys", "indices", "weights", "input", "target",
        "logits", "labels", "mean", "variance", "log_p", "log_q", "t", "nu", "scale", "alpha",
    }
)  # fmt: skip
"""Unannotated parameter names that take arrays (``jnp.polyval(p, x)``, ``special.xlogy(x, y)``)."""

_LIST = re.compile(r"^(Sequence|list|tuple)\[(ArrayLike|Array)")
_ARRAY = re.compile(r"\b(ArrayLike|Array|ndarray)\b")
_SCALAR_KINDS: tuple[tuple[re.Pattern[str], ArgKind], ...] = (
    (re.compile(r"^(Shape|Sequence\[int\]|tuple\[int, \.\.\.\]|Sequence\[DimSize\])$"), ArgKind.SHAPE),
    (re.compile(r"^(int|DimSize|Axis|int \| Sequence\[int\])$"), ArgKind.INT),
    (re.compile(r"^(float|float \| int|int \| float)$"), ArgKind.FLOAT),
    (re.compile(r"^bool$"), ArgKind.BOOL),
    (re.compile(r"^str$"), ArgKind.STRING),
)


def arguments(function: Callable[..., object]) -> tuple[Argument, ...]:
    """The arguments of ``function``; a ``*args`` parameter is one tensor list, spread when called,
    and required where it is the first parameter (``jnp.broadcast_arrays(*args)``; ``piecewise``'s
    trailing ``*args`` are extras).
    ``**kwargs`` is left out: nothing is passed through it."""
    inputs = getattr(function, "nin", None)
    if type(function).__name__ == "ufunc" and isinstance(inputs, int):  # jnp.add in JAX 0.5 and later
        names = ("x",) if inputs == 1 else tuple(f"x{i + 1}" for i in range(inputs))
        return tuple(Argument(name, ArgKind.TENSOR, required=True, type_string="ArrayLike") for name in names)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(
        _argument(p, first=position == 0)
        for position, p in enumerate(parameters)
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    )


_SPELLINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(typing|collections\.abc)\."), ""),
    (re.compile(r"\bjax(\.\w+)*\.Array\b"), "Array"),
    (re.compile(r"\bnumpy\.ndarray\b"), "np.ndarray"),
    (re.compile(r"\bUnion\[Array, np\.ndarray, [^\[\]]*\]"), "ArrayLike"),
)
"""How an evaluated annotation reads as its source spells it: newer JAX evaluates some (``lexsort``'s
``keys`` reads ``jax.jaxlib._jax.Array | numpy.ndarray | collections.abc.Sequence[typing.Union[
jax.jaxlib._jax.Array, numpy.ndarray, numpy.bool, ...]]`` in JAX 0.10, where 0.4.30 keeps the text
``Array | np.ndarray | Sequence[ArrayLike]``), and the kinds are read from the source's spelling."""


def annotation_text(annotation: object) -> str:
    """An annotation as its source spells it: text as written, a class by its name (``int``), an
    evaluated type with its modules and ``ArrayLike``'s union put back (``_SPELLINGS``)."""
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:  # not ``tuple[int, ...]``
        return annotation.__name__
    text = str(annotation)
    for pattern, spelling in _SPELLINGS:
        text = pattern.sub(spelling, text)
    return text


def _argument(parameter: inspect.Parameter, first: bool) -> Argument:
    annotation = annotation_text(parameter.annotation)
    variadic = parameter.kind is inspect.Parameter.VAR_POSITIONAL
    required = (parameter.default is inspect.Parameter.empty and not variadic) or (variadic and first)
    nullable = bool(re.search(r"\bNone\b", annotation)) or parameter.default is None
    kind = ArgKind.TENSOR_LIST if variadic else _kind(parameter.name, _without_none(annotation))
    return Argument(
        name=parameter.name,
        kind=kind,
        required=required,
        type_string=("*" if variadic else "") + annotation,
        default=None if parameter.default is inspect.Parameter.empty else _plain(parameter.default),
        nullable=nullable,
        keyword_only=parameter.kind is inspect.Parameter.KEYWORD_ONLY,
    )


def _without_none(annotation: str) -> str:
    parts = [part.strip() for part in annotation.split("|")]
    return " | ".join(part for part in parts if part != "None")


def _kind(name: str, annotation: str) -> ArgKind:
    """The kind an annotation (without ``None``) says, else the name (unannotated arrays)."""
    if annotation.startswith("Sequence[int]"):  # ``lax.transpose``'s ``Sequence[int] | np.ndarray``
        return ArgKind.SHAPE
    if _LIST.match(annotation) or "Sequence[ArrayLike]" in annotation:
        return ArgKind.TENSOR_LIST
    if annotation.startswith(("ArrayLike", "Array", "jax.typing.ArrayLike", "jax.Array")) or (
        _ARRAY.search(annotation) and "Sequence[ArrayLike]" not in annotation
    ):
        return ArgKind.TENSOR
    for pattern, kind in _SCALAR_KINDS:
        if pattern.match(annotation):
            return kind
    if not annotation and name in ARRAY_NAMES:
        return ArgKind.TENSOR
    return ArgKind.OTHER


def _plain(default: object) -> object:
    """A default as a plain value where it is one (numbers, text, tuples), else its text."""
    if default is None or type(default) in (bool, int, float, str):  # not an IntEnum: its repr
        return default
    if isinstance(default, tuple) and all(type(v) in (int, float, str) for v in default):
        return default
    return repr(default)
