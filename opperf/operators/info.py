"""Immutable records describing a registered operator and its arguments.

Backends fill these from their registries; rules, categories and reports read them and never touch a
framework.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, cast

from opperf.frameworks import DEFAULT_FRAMEWORK


class ArgKind(str, Enum):
    """What an argument takes, parsed from the registry's type string."""

    TENSOR = "tensor"
    TENSOR_LIST = "tensor_list"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    SHAPE = "shape"
    FLOAT_TUPLE = "float_tuple"
    INT_TUPLE = "int_tuple"
    CHOICE = "choice"
    STRING = "string"
    OTHER = "other"


@dataclass(frozen=True)
class Argument:
    """One operator argument: its name, parsed kind, and whether the caller must supply it.

    MXNet's type strings call every tensor argument required, optional ones (a bias, a cell state)
    included; only scalar arguments' ``required`` is reliable. ``keyword_only`` arguments (PyTorch's
    after ``*``) cannot be passed by position.
    """

    name: str
    kind: ArgKind
    required: bool
    type_string: str = ""
    default: object = None
    choices: tuple[str | None, ...] = ()
    nullable: bool = False
    keyword_only: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.kind in (ArgKind.TENSOR, ArgKind.TENSOR_LIST)


@dataclass(frozen=True)
class OpInfo:
    """A distinct operator: its canonical name, aliases, where it is exposed, and its signature.

    ``function_name`` is what the operator is called in its first namespace (``add`` for ``_npi_add``
    in ``mx.np``).

    ``has_backward`` is registry evidence (a registered ``_backward_*`` operator); a measurement finds
    the truth by running the gradient, and records it.
    """

    name: str
    aliases: tuple[str, ...]
    namespaces: tuple[str, ...]
    function_name: str
    arguments: tuple[Argument, ...]
    has_backward: bool
    category: str = "misc"
    var_args_key: str = ""
    framework: str = DEFAULT_FRAMEWORK

    @property
    def tensor_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_tensor)

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


_SCALAR_KINDS = (
    (re.compile(r"^(NDArray-or-Symbol|NDArray|Symbol)$"), ArgKind.TENSOR),
    (re.compile(r"^(NDArray-or-Symbol|NDArray|Symbol)(\[\]| or Symbol\[\])$"), ArgKind.TENSOR_LIST),
    (re.compile(r"^(int|long)( \(non-negative\))?$"), ArgKind.INT),
    (re.compile(r"^(float|double)$"), ArgKind.FLOAT),
    (re.compile(r"^boolean$"), ArgKind.BOOL),
    (re.compile(r"^Shape(\(tuple\))?$"), ArgKind.SHAPE),
    (re.compile(r"^tuple of <(float|double)>$"), ArgKind.FLOAT_TUPLE),
    (re.compile(r"^tuple of <(int|long)>$"), ArgKind.INT_TUPLE),
    (re.compile(r"^string$"), ArgKind.STRING),
)


def parse_argument(name: str, type_string: str) -> Argument:
    """Parse one registry type string such as ``"int or None, optional, default='None'"``.

    >>> parse_argument("axis", "int, optional, default='-1'").default
    -1
    """
    text = type_string.strip()
    required = "required" in text or "optional" not in text
    default = None
    match = re.search(r"default=(.*)$", text)
    if match:
        default = _parse_literal(match.group(1))
    head = re.split(r",\s*(optional|required)", text)[0].strip()
    choices: tuple[str | None, ...] = ()
    nullable = False
    if head.startswith("{"):
        kind = ArgKind.CHOICE
        choices = tuple(cast("str | None", _parse_literal(c.strip())) for c in head.strip("{}").split(","))
        nullable = None in choices or "None" in choices
    else:
        if head.endswith(" or None"):
            nullable = True
            head = head[: -len(" or None")]
        kind = next((k for pattern, k in _SCALAR_KINDS if pattern.match(head)), ArgKind.OTHER)
    if kind is ArgKind.BOOL and default is not None:
        default = str(default).lower() in ("1", "true")
    return Argument(
        name=name,
        kind=kind,
        required=required,
        type_string=type_string,
        default=default,
        choices=choices,
        nullable=nullable,
    )


def _parse_literal(text: str) -> object:
    """A registry default or choice as a Python value; text that is no literal stays text."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        text = text[1:-1]
    if text == "None":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


@dataclass(frozen=True)
class Category:
    """An operator category as data: a name, what it holds, and the predicate over ``OpInfo`` that
    decides membership (each framework lists its categories in order; the first match wins)."""

    name: str
    description: str
    matches: Callable[[OpInfo], bool]


class Identity(NamedTuple):
    """Which operator a user's function is: its namespace, its name there, and the registry's record
    when it is a registered operator's front end (None for a Python wrapper or an unknown function)."""

    namespace: str
    name: str
    info: OpInfo | None
