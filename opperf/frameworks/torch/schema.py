"""PyTorch operator schemas read as opperf arguments, and the choice of an operator's functional overload.

A schema (``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``) is read through
the JIT's structured ``FunctionSchema`` objects, never by parsing its printed text. Types are rendered
back in schema notation (``SymInt[2]``, ``Tensor?``, ``Scalar``) for ``Argument.type_string``; the kind
opperf generates a value for follows from that text alone, so kinds are testable without torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from opperf.operators.info import ArgKind, Argument

# JIT type kinds -> schema notation. Anything else (type variables, dicts, futures, classes) belongs to
# TorchScript builtins that eager Python code never calls with tensors.
BASE_TYPES = {
    "TensorType": "Tensor",
    "IntType": "int",
    "SymIntType": "SymInt",
    "FloatType": "float",
    "NumberType": "Scalar",
    "BoolType": "bool",
    "SymBoolType": "SymBool",
    "StringType": "str",
    "ComplexType": "complex",
    "ScalarTypeType": "ScalarType",
    "LayoutType": "Layout",
    "MemoryFormatType": "MemoryFormat",
    "DeviceObjType": "Device",
    "GeneratorType": "Generator",
    "QSchemeType": "QScheme",
    "StorageType": "Storage",
    "StreamObjType": "Stream",
}

_LIST = r"\[\d*\]"
# Kinds by the base type text (no trailing ``?``); the first pattern that matches wins.
_KINDS: tuple[tuple[re.Pattern[str], ArgKind], ...] = (
    (re.compile(r"Tensor"), ArgKind.TENSOR),
    (re.compile(rf"Tensor\??{_LIST}"), ArgKind.TENSOR_LIST),
    (re.compile(r"int|SymInt"), ArgKind.INT),
    (re.compile(rf"(int|SymInt){_LIST}"), ArgKind.INT_TUPLE),
    (re.compile(r"float|Scalar"), ArgKind.FLOAT),
    (re.compile(rf"(float|Scalar){_LIST}"), ArgKind.FLOAT_TUPLE),
    (re.compile(r"bool|SymBool"), ArgKind.BOOL),
    (re.compile(r"str"), ArgKind.STRING),
)

# Overload names in order of preference for the operator's functional form: ``where.self`` is
# ``where(condition, self, other)``; ``add.Tensor`` beats ``add.Scalar``; ``lstm.input`` beats
# ``lstm.data`` (packed sequences).
PREFERRED_OVERLOADS = ("self", "", "Tensor", "input", "Tensor_Tensor", "default", "int", "dim")

# Argument names of every ``self`` the Python function form calls ``input`` (``torch.add(input, other)``).
PYTHON_SELF_NAME = "input"


def type_text(schema_type: Any, size: int | None = None) -> str:
    """A JIT type in schema notation: ``SymInt[2]``, ``int[1]?``, ``Tensor?[]``; '' if not eager-callable.

    ``size`` is the fixed list length the schema declares on the argument (``Argument.N``).
    """
    kind = schema_type.kind()
    if kind == "OptionalType":
        inner = type_text(schema_type.getElementType(), size)
        return f"{inner}?" if inner else ""
    if kind == "ListType":
        inner = type_text(schema_type.getElementType())
        return f"{inner}[{size or ''}]" if inner else ""
    return BASE_TYPES.get(kind, "")


def argument_kind(name: str, text: str) -> ArgKind:
    """The kind of value an argument takes, from its schema type text.

    >>> argument_kind("size", "SymInt[]")
    <ArgKind.SHAPE: 'shape'>
    """
    base = text[:-1] if text.endswith("?") else text
    kind = next((k for pattern, k in _KINDS if pattern.fullmatch(base)), ArgKind.OTHER)
    if kind is ArgKind.INT_TUPLE and name == "size":
        return ArgKind.SHAPE
    return kind


def make_argument(
    name: str, text: str, has_default: bool, default: object, keyword_only: bool = False
) -> Argument:
    """An opperf Argument: ``Tensor?`` is optional (None is a valid value); others are required
    exactly when the schema gives no default."""
    kind = argument_kind(name, text)
    nullable = text.endswith("?")
    required = not has_default and not (nullable and kind is ArgKind.TENSOR)
    return Argument(
        name=name,
        kind=kind,
        required=required,
        type_string=text,
        default=_python_default(default),
        nullable=nullable,
        keyword_only=keyword_only,
    )


def _python_default(default: object) -> object:
    """Schema defaults as hashable values: lists become tuples."""
    return tuple(default) if isinstance(default, list) else default


@dataclass(frozen=True)
class Overload:
    """One schema reduced to what opperf needs: its names, arguments and mutability."""

    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    mutable: bool
    writes_out: bool
    eager: bool
    returns_tensor: bool

    @property
    def involves_tensors(self) -> bool:
        return self.returns_tensor or any(a.is_tensor for a in self.arguments)

    @property
    def first_is_tensor(self) -> bool:
        return bool(self.arguments) and self.arguments[0].is_tensor


def read_overload(schema: Any) -> Overload:
    """An ``Overload`` from a ``torch._C.FunctionSchema``."""
    texts = [type_text(a.real_type, a.N) for a in schema.arguments]
    arguments = tuple(
        make_argument(a.name, text, a.has_default_value(), a.default_value, a.kwarg_only)
        for a, text in zip(schema.arguments, texts, strict=True)
    )
    return_texts = [type_text(r.real_type) for r in schema.returns]
    return Overload(
        name=schema.name.split("::", 1)[1],
        overload_name=schema.overload_name,
        arguments=arguments,
        mutable=schema.is_mutable,
        writes_out=any(a.is_out for a in schema.arguments),
        eager=all(texts) and all(return_texts),
        returns_tensor=any(t.startswith("Tensor") for t in return_texts),
    )


def functional_overload(overloads: list[Overload], canonical: str) -> Overload | None:
    """The overload opperf benchmarks: eager-callable, involving tensors, writing no ``out=``; a
    non-mutating one where there is one (in-place-only operators such as ``fill_diagonal_`` have none).

    Among those: the canonical name's own overloads first, then ``PREFERRED_OVERLOADS``, then tensors
    before scalars in the first position, then the fewest required arguments.
    """
    candidates = [o for o in overloads if o.eager and o.involves_tensors and not o.writes_out]
    if not candidates:
        return None

    def rank(overload: Overload) -> tuple:
        return (
            overload.mutable,
            overload.name != canonical,
            _preference(overload.overload_name),
            not overload.first_is_tensor,
            sum(a.required for a in overload.arguments),
            overload.name,
            overload.overload_name,
        )

    return min(candidates, key=rank)


def _preference(overload_name: str) -> int:
    """The overload name's place in ``PREFERRED_OVERLOADS``; unlisted names come after all of them."""
    if overload_name in PREFERRED_OVERLOADS:
        return PREFERRED_OVERLOADS.index(overload_name)
    return len(PREFERRED_OVERLOADS)


def python_arguments(overload: Overload, self_name: str) -> tuple[Argument, ...]:
    """The overload's arguments as the Python entry point names them: ``self`` is ``self_name``."""
    return tuple(replace(a, name=self_name) if a.name == "self" else a for a in overload.arguments)
