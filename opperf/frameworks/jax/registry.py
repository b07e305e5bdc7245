"""JAX's operator registry: every public function of its array namespaces (``entry_points.NAMESPACES``),
one operator per function object (a function with several names has them as aliases), read once into
immutable ``OpInfo`` records.

Functions that compute nothing on arrays are registered names, not operators (``NOT_OPERATORS``): dtype
and shape queries, printing, files, and helpers that build a function from a Python one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace

from opperf.frameworks.jax.categories import categorize
from opperf.frameworks.jax.entry_points import (
    NAMESPACES,
    names_by_function,
    operator_name,
    public_function,
)
from opperf.frameworks.jax.signatures import arguments
from opperf.operators.info import OpInfo

FRAMEWORK = "jax"

_QUERY = "answers from dtypes or shapes alone: it runs no array computation"
_PRINTING = "sets or reads how arrays print"
_FILE = "reads or writes a file; benchmarking file I/O is out of scope"
_BUILDER = "builds a function from a Python callable: it is no operator of its own"
_SHARDING = "places arrays on devices or meshes: it runs no array computation"
_QUERIES = (
    "can_cast", "dtype", "finfo", "iinfo", "issubdtype", "isdtype", "promote_types", "result_type",
    "isscalar", "ndim", "shape", "size", "iscomplexobj", "isrealobj", "iterable", "einsum_path",
    "broadcast_shapes", "lax.dtype", "lax.broadcast_shapes", "lax.conv_dimension_numbers",
    "lax.padtype_to_pads", "lax.conv_general_permutations", "lax.conv_general_shape_tuple",
    "lax.conv_shape_tuple", "lax.conv_transpose_shape_tuple", "lax.reduce_window_shape_tuple",
    "lax.ranges_like", "lax.is_finite_dtype", "lax.dtypes", "lax.full_like_shape",
)  # fmt: skip
NOT_OPERATORS: Mapping[str, str] = {
    **dict.fromkeys(_QUERIES, _QUERY),
    **dict.fromkeys(
        ("get_printoptions", "printoptions", "set_printoptions", "array_repr", "array_str"), _PRINTING
    ),
    **dict.fromkeys(("load", "save", "savez", "fromfile", "fromstring"), _FILE),
    **dict.fromkeys(("vectorize", "frompyfunc", "lax.custom_root", "lax.custom_linear_solve"), _BUILDER),
    **dict.fromkeys(("lax.with_sharding_constraint",), _SHARDING),
}
"""Registered names that are no operator, each with the reason."""


@dataclass(frozen=True)
class Registry:
    """Registered names (aliases included), the operators, and each operator's entry points."""

    registered_names: tuple[str, ...]
    operators: tuple[OpInfo, ...]
    entry_points: Mapping[str, tuple[tuple[str, str], ...]]

    @functools.cached_property
    def by_name(self) -> dict[str, OpInfo]:
        """Every name (canonical and alias) to its operator."""
        return {name: op for op in self.operators for name in op.all_names}

    @functools.cached_property
    def by_entry_point(self) -> dict[tuple[str, str], OpInfo]:
        """(namespace, Python name) to the operator it calls."""
        return {point: op for op in self.operators for point in self.entry_points[op.name]}


@functools.cache
def load_registry() -> Registry:
    """Read the namespaces once per process (the result is immutable)."""
    registered: list[str] = []
    operators: list[OpInfo] = []
    exposures: dict[str, tuple[tuple[str, str], ...]] = {}
    for points in sorted(names_by_function().values(), key=lambda points: _order(points[0])):
        namespace, name = points[0]
        names = tuple(dict.fromkeys(operator_name(*point) for point in points))
        registered.extend(names)
        if names[0] in NOT_OPERATORS:
            continue
        function = public_function(namespace, name)
        info = OpInfo(
            name=names[0],
            aliases=names[1:],
            namespaces=tuple(dict.fromkeys(space for space, _ in points)),
            function_name=name,
            arguments=arguments(function) if function is not None else (),
            has_backward=True,
            framework=FRAMEWORK,
        )
        operators.append(replace(info, category=categorize(info)))
        exposures[info.name] = points
    return Registry(tuple(sorted(registered)), tuple(operators), exposures)


def _order(point: tuple[str, str]) -> tuple[int, str]:
    namespace, name = point
    return [space for space, _ in NAMESPACES].index(namespace), name
