"""What a replayed configuration may choose: what a sweep's own rules could, and nothing more.

A configs file (or a results file read as one) comes from elsewhere: a colleague's capture, a CI
artifact, a file attached to a bug report. Its configurations are data. Before one is measured it
passes the checks a swept configuration passes: the operator's skip reason (the caller asks the rules),
and per argument, a value of the kind the operator declares:

- tensors within the framework's dtypes, storages and rank, and numbers, booleans, shapes and choices
  where the operator takes them (the memory fit check then applies to every configuration alike);
  lists of at most ``MAX_ITEMS``;
- text only for the arguments whose text is data (an einsum equation, a reduction's name), and named
  constants (a dtype, a layout) only from the framework's list;
- an argument that names a resource (a path, a device, a handle, a pointer, a ``shared`` mapping, a
  generator or a callable's registered name) only with the value the sweep's own rules give it, its
  declared default, or None; the same holds for any value of a kind not listed above.

``refusal`` is a pure function of the operator's record, the file's inputs, the sweep's own
configurations of the operator and the framework's ``ReplayPolicy``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.results.measurement import InputValue, TensorSpec

MAX_TEXT_CHARS = 256
"""The longest text argument a file may give (an equation, a mode): a name, not a document."""

MAX_ITEMS = 1024
"""The longest list a file may give an argument (tensors to concatenate or add, axes, a shape): more
than any model calls an operator with; a million one-element tensors took a worker to 2.7 GB."""

MAX_INTEGER = 2**63 - 1
"""The largest integer an argument takes (a 64-bit index or size); beyond it the value is no size."""


@dataclass(frozen=True)
class ReplayPolicy:
    """What a framework lets a configs file choose, by argument name and type.

    ``text_arguments``: arguments whose text values are data (``equation``, ``reduce``).
    ``numeric_arguments``: arguments the registry leaves untyped that take numbers or tuples of them.
    ``constants``: a type's prefix (``ScalarType``) -> the names a file may give for it.
    ``resources``: arguments that name a file, device, handle or mapping, whatever their type.
    ``tensor_dtypes``, ``storages``, ``max_rank``, ``max_elements``: what a tensor may be (None: no
    limit of its own; the memory fit check still applies).
    """

    tensor_dtypes: frozenset[str]
    storages: frozenset[str]
    text_arguments: frozenset[str] = frozenset()
    numeric_arguments: frozenset[str] = frozenset()
    constants: Mapping[str, frozenset[str]] = field(default_factory=dict)
    resources: frozenset[str] = frozenset()
    max_rank: int = 32
    max_elements: int | None = None


def refusal(
    op: OpInfo,
    inputs: Sequence[tuple[str, InputValue]],
    swept: Sequence[Mapping[str, InputValue]],
    policy: ReplayPolicy,
) -> str | None:
    """Why a sweep refuses to run ``op`` with ``inputs`` from a file, or None when it may run them.

    ``swept`` are the configurations the sweep's own rules give ``op``: a value equal to one of theirs
    (or to the argument's declared default) is always accepted."""
    for name, value in inputs:
        argument = op.argument(name)
        known = [config[name] for config in swept if name in config]
        if argument is not None:
            known.append(argument.default)
        problem = _problem(name, argument, value, known, policy)
        if problem is not None:
            return f"{op.name}'s argument {name!r} {problem}"
    return None


def _problem(
    name: str, argument: Argument | None, value: InputValue, known: list[InputValue], policy: ReplayPolicy
) -> str | None:
    if value is None or any(_same(value, k) for k in known):
        return None
    if isinstance(value, tuple) and len(value) > MAX_ITEMS:
        return f"is a list of {len(value):,} items, more than {MAX_ITEMS:,}"
    if isinstance(value, TensorSpec) or (isinstance(value, tuple) and _all_tensors(value)):
        return _tensors_problem(value, argument, known, policy)
    if name in policy.resources:
        return f"names a resource ({_shown(value)}): only opperf's rules set it, never a file"
    kind = argument.kind if argument is not None else None
    if kind in (ArgKind.TENSOR, ArgKind.TENSOR_LIST, ArgKind.FLOAT, None) and _is_number(value):
        return None
    if kind is None and (_is_bool(value) or _is_numbers(value)):
        return None
    if argument is not None and argument.kind is ArgKind.CHOICE:
        choices = [c for c in argument.choices if c is not None]
        return None if value in choices else f"is {_shown(value)}, not one of {', '.join(map(str, choices))}"
    if isinstance(value, str):
        return _text_problem(name, argument, value, policy)
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        # texts that are data together (a convolution's dimension numbers: NHWC, HWIO, NHWC)
        found = (_text_problem(name, argument, cast(str, v), policy) for v in value)
        return next((problem for problem in found if problem is not None), None)
    if (
        kind is ArgKind.OTHER
        and name in policy.numeric_arguments
        and (_is_numbers(value) or _is_named_numbers(value))
    ):
        return None
    accepted = _ACCEPTS.get(kind) if kind is not None else None
    if accepted is not None and accepted(value):
        return None
    expected = _EXPECTED.get(kind, "the value opperf's rules give it") if kind is not None else "a number"
    return f"is {_shown(value)}; it takes {expected}"


def _tensors_problem(
    value: TensorSpec | tuple, argument: Argument | None, known: list[InputValue], policy: ReplayPolicy
) -> str | None:
    takes_tensors = argument is None or argument.is_tensor or any(_holds_tensor(k) for k in known)
    if not takes_tensors:
        return f"is a tensor; it takes {_EXPECTED.get(cast(Argument, argument).kind, 'no tensor')}"
    for tensor in value if isinstance(value, tuple) else (value,):
        problem = _tensor_problem(tensor, policy)
        if problem is not None:
            return problem
    return None


def foreign_tensor(inputs: Iterable[tuple[str, InputValue]], policy: ReplayPolicy) -> str | None:
    """The first tensor of ``inputs`` the framework can have none of, whatever the operator (a dtype,
    storage or rank it lacks), as "argument 'x' is a tensor of ...": a configs file naming one is
    malformed, not a configuration an operator may refuse; None when there is none."""
    for name, value in inputs:
        tensors = value if isinstance(value, tuple) and _all_tensors(value) else (value,)
        for tensor in tensors:
            if isinstance(tensor, TensorSpec):
                problem = _framework_problem(tensor, policy)
                if problem is not None:
                    return f"argument {name!r} {problem}"
    return None


def _framework_problem(tensor: TensorSpec, policy: ReplayPolicy) -> str | None:
    if tensor.dtype is not None and tensor.dtype not in policy.tensor_dtypes:
        return f"is a tensor of dtype {tensor.dtype!r}, not one of {', '.join(sorted(policy.tensor_dtypes))}"
    if tensor.storage not in policy.storages:
        return f"is a tensor of storage {tensor.storage!r}, not one of {', '.join(sorted(policy.storages))}"
    if len(tensor.shape) > policy.max_rank:
        return f"is a tensor of rank {len(tensor.shape)}, more than {policy.max_rank}"
    return None


def _tensor_problem(tensor: TensorSpec, policy: ReplayPolicy) -> str | None:
    framework_problem = _framework_problem(tensor, policy)
    if framework_problem is not None:
        return framework_problem
    if any(not _is_int(d) or d < 0 for d in tensor.shape):
        return f"has shape {list(tensor.shape)}: each dimension is a non-negative integer"
    if policy.max_elements is not None and tensor.size > policy.max_elements:
        return f"is a tensor of {tensor.size} elements, more than {policy.max_elements} (a sweep's limit)"
    if not 0 < tensor.density <= 1:
        return f"has density {tensor.density}, outside (0, 1]"
    return None


def _text_problem(name: str, argument: Argument | None, value: str, policy: ReplayPolicy) -> str | None:
    constants = _constants(argument, policy)
    if constants is not None:
        return None if value in constants else f"is {_shown(value)}, not a name this framework has"
    if name in policy.text_arguments and len(value) <= MAX_TEXT_CHARS and value.isprintable():
        return None
    return f"is the text {_shown(value)}: only opperf's rules set its text, never a file"


def _constants(argument: Argument | None, policy: ReplayPolicy) -> frozenset[str] | None:
    """The names a file may give an argument of a named-constant type (a dtype), or None."""
    if argument is None:
        return None
    return next(
        (names for prefix, names in policy.constants.items() if argument.type_string.startswith(prefix)), None
    )


def _same(value: InputValue, known: InputValue) -> bool:
    """Equal as values and as types (``True`` is not ``1``, ``1.0`` is not ``1``)."""
    if isinstance(value, tuple) and isinstance(known, tuple):
        return len(value) == len(known) and all(_same(v, k) for v, k in zip(value, known, strict=True))
    return type(value) is type(known) and value == known


def _shown(value: InputValue) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _all_tensors(value: tuple) -> bool:
    return bool(value) and all(isinstance(v, TensorSpec) for v in value)


def _holds_tensor(value: InputValue) -> bool:
    return isinstance(value, TensorSpec) or (
        isinstance(value, tuple) and any(_holds_tensor(v) for v in value)
    )


def _is_bool(value: InputValue) -> bool:
    return isinstance(value, bool)


def _is_int(value: InputValue) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INTEGER


def _is_number(value: InputValue) -> bool:
    return _is_int(value) or isinstance(value, float)


def _is_ints(value: InputValue) -> bool:
    return _is_int(value) or (isinstance(value, tuple) and all(_is_int(v) for v in value))


def _is_numbers(value: InputValue) -> bool:
    """A number, or a tuple of numbers (nested: a pad width's pairs)."""
    return _is_number(value) or (isinstance(value, tuple) and all(_is_numbers(v) for v in value))


def _is_named_numbers(value: InputValue) -> bool:
    """Numbers by field name, as pairs (a gather's dimension numbers: ``(("offset_dims", (1,)), ...)``,
    which the framework makes its record of, by those names)."""
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and pair[0].isidentifier()
            and _is_numbers(pair[1])
            for pair in value
        )
    )


_ACCEPTS = {
    ArgKind.INT: _is_int,
    ArgKind.FLOAT: _is_number,
    ArgKind.BOOL: _is_bool,
    ArgKind.SHAPE: _is_ints,
    ArgKind.INT_TUPLE: _is_ints,
    ArgKind.FLOAT_TUPLE: _is_numbers,
}
_EXPECTED = {
    ArgKind.TENSOR: "a tensor or a number",
    ArgKind.TENSOR_LIST: "a list of tensors",
    ArgKind.INT: "an integer",
    ArgKind.FLOAT: "a number",
    ArgKind.BOOL: "true or false",
    ArgKind.SHAPE: "a shape (integers)",
    ArgKind.INT_TUPLE: "integers",
    ArgKind.FLOAT_TUPLE: "numbers",
    ArgKind.STRING: "the text opperf's rules give it",
}
