"""JAX inputs derived from signatures: the operator's own override (``OVERRIDES``, keyed by operator
name), else a rule for the argument's name (``SCALAR_RULES``, ``TENSOR_RULES``), else its kind.
Optional arguments keep their defaults. Indices are int32: JAX without ``jax_enable_x64`` has no
64-bit integers. Arguments that take a function get the name of one of the session's bodies
(``frameworks/jax/bodies.py``), as data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.operators.rules.generic import (
    LIST_LENGTH,
    NoRuleError,
    RuleContext,
    derive_configurations,
    type_default,
)
from opperf.operators.rules.profiles import SizeProfile
from opperf.results.measurement import InputValue, TensorSpec

Configurations = list[dict[str, InputValue]]
Override = Callable[[RuleContext], dict[str, InputValue]]
T = TensorSpec
INDEX_DTYPE = "int32"

CREATION_EXTENT = 1024
"""The largest side of a square array a size argument makes (``eye(N)``, ``tri(N)``): 1M elements."""


def rows(c: RuleContext) -> int:
    return c.shape[0]


def numel(c: RuleContext) -> int:
    return math.prod(c.shape)


def index(shape: tuple[int, ...], extent: int) -> TensorSpec:
    """int32 indices in [0, extent): in bounds of the axis they index."""
    return T(shape, dtype=INDEX_DTYPE, low=0, high=extent, integral=True)


def _side(c: RuleContext) -> int:
    return min(rows(c), CREATION_EXTENT)


def _reversed_axes(c: RuleContext) -> tuple[int, ...]:
    return tuple(reversed(range(len(c.shape))))


SCALAR_RULES: dict[str, Callable[[RuleContext], InputValue]] = {
    "axis": lambda c: 0,
    "axis1": lambda c: 0,
    "axis2": lambda c: 1,
    "source": lambda c: 0,
    "destination": lambda c: 1,
    "dimension": lambda c: 0,
    "kth": lambda c: 1,
    "k": lambda c: 8,
    "n": _side,
    "N": _side,
    "M": _side,
    "num_classes": lambda c: 16,
    "shape": lambda c: c.shape,
    "new_shape": lambda c: (numel(c),),
    "new_sizes": lambda c: (numel(c),),
    "sizes": lambda c: (2,),
    "dimensions": _reversed_axes,
    "axes": _reversed_axes,
    "permutation": _reversed_axes,
    "reps": lambda c: (2,) + (1,) * (len(c.shape) - 1),
    "start_dimension": lambda c: 0,
    "exponent_bits": lambda c: 5,
    "mantissa_bits": lambda c: 10,
    "fill_value": lambda c: 1.5,
    "index_dtype": lambda c: INDEX_DTYPE,
    "deg": lambda c: 2,
    "rank": lambda c: len(c.shape) + 1,
}
"""Required non-array arguments by name."""

TENSOR_RULES: dict[str, Callable[[RuleContext], InputValue]] = {
    "condition": lambda c: T(c.shape, dtype="bool"),
    "where": lambda c: T(c.shape, dtype="bool"),
    "mask": lambda c: T(c.shape, dtype="bool"),
}
"""Array arguments by name whose values must be of a kind: conditions are boolean."""


def _tensor_value(arg: Argument, c: RuleContext, binary: bool) -> InputValue:
    if arg.kind is ArgKind.TENSOR_LIST:
        return tuple(T(c.shape) for _ in range(LIST_LENGTH))
    if arg.name in TENSOR_RULES:
        return TENSOR_RULES[arg.name](c)
    if binary:
        first = next(a.name for a in c.op.arguments if a.kind is ArgKind.TENSOR and a.required)
        return T(c.pair[0] if arg.name == first else c.pair[1])
    return T(c.shape)


def _value(arg: Argument, c: RuleContext, binary: bool) -> InputValue:
    rule = SCALAR_RULES.get(arg.name)
    if rule is not None and not arg.is_tensor:
        return rule(c)
    if arg.is_tensor:
        return _tensor_value(arg, c, binary)
    try:
        return type_default(arg, c)
    except NoRuleError:
        if arg.nullable:
            return None
        raise


GEMM = "gemm"
"""The category of matrix products (``categories``)."""


def derive(op: OpInfo, profile: SizeProfile, overrides: Mapping[str, Override]) -> Configurations:
    """One configuration per profile shape, from the signature, the name rules and the operator's
    override (``generic.derive_configurations``) fitted to the signature, in the signature's order."""
    override = overrides.get(op.name)
    fitted = None if override is None else _fitted(override)
    return derive_configurations(op, profile, _shapes(op, profile), fitted, _value)


def _shapes(op: OpInfo, profile: SizeProfile) -> tuple[tuple[int, ...], ...]:
    """The profile's shapes for the operator's category; matrix products one square of the profile's
    ``features`` (256 in the standard profile; drawn under ``--shapes fuzz``), which their overrides
    size their operands from: with fixed sizes, a fuzzed sweep measured every product at 256."""
    if op.category != GEMM or profile.layers is None:
        return profile.shapes_for(op.category)
    return ((profile.layers.features, profile.layers.features),)


SPREAD = "args"
"""How an override gives ``*args``: a tuple of values, spread when called."""


def _fitted(override: Override) -> Override:
    def rule(c: RuleContext) -> dict[str, InputValue]:
        return fit_to_signature(c.op, override(c))

    return rule


def fit_to_signature(op: OpInfo, given: Mapping[str, InputValue]) -> dict[str, InputValue]:
    """An override's arguments under the names ``op``'s signature gives them. Overrides are written
    against JAX 0.4.30, and a sweep may run newer JAX in its own interpreter, where positional
    parameters were renamed (``jnp.clip(x, /, ...)`` became ``clip(arr, /, ...)``, ``left_shift(x1,
    x2, /)`` became ``left_shift(x, y, /)``) and ``*args`` wrappers gained parameters
    (``special.beta(*args)`` became ``beta(a, b)``; ``mask_indices(*args, **kwargs)`` became
    ``mask_indices(n, mask_func, k=0, *, size=None)``), or the other way (``lax.random_gamma_grad(a,
    x)`` became ``random_gamma_grad(*args)``). A value whose name the signature lacks takes, in order,
    the next parameter that can be passed by position and that nothing else gives; a ``*args`` tuple
    the signature has no place for is spread over them; values left over become the signature's own
    ``*args`` where it has one, else stay as given: the call fails saying which. The override's values
    are taken in the order it gives them, which is its signature's order in 0.4.30."""
    names = {argument.name for argument in op.arguments}
    if all(name in names for name in given):
        return dict(given)
    variadic = next((a.name for a in op.arguments if a.type_string.startswith("*")), None)
    by_position = (a for a in op.arguments if not a.keyword_only and a.name != variadic)
    open_positions = iter(a.name for a in by_position if a.name not in given)
    fitted: dict[str, InputValue] = {}
    left_over: dict[str, InputValue] = {}
    for name, value in given.items():
        if name in names:
            fitted[name] = value
            continue
        if name == SPREAD and isinstance(value, tuple):
            items = [(f"{name}[{index}]", item) for index, item in enumerate(value)]
        else:
            items = [(name, value)]
        for item_name, item in items:
            target = next(open_positions, None)
            if target is None:
                left_over[item_name] = item
            else:
                fitted[target] = item
    if left_over and variadic is not None and variadic not in fitted:
        return {**fitted, variadic: tuple(left_over.values())}
    return {**fitted, **left_over}
