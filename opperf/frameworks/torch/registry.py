"""PyTorch's aten operator registry, read once from the JIT's schemas into immutable ``OpInfo`` records.

Every ``aten::`` name is registered; variants fold into the functional operator they modify, as its
aliases: in-place (``add_``), out= (``.out`` overloads, ``foo_out``), functionalised (``normal_functional``)
and private (``_softmax``) variants. Backward operators (``*_backward``) are registered but are not
operators of their own: autograd runs them. An operator is benchmarked through its public Python entry
point (``namespaces.entry_points``); operators without one are registered but not in ``operators``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from opperf.frameworks.torch.categories import categorize
from opperf.frameworks.torch.entry_points import TENSOR_NAMESPACE, entry_points
from opperf.frameworks.torch.schema import (
    PYTHON_SELF_NAME,
    Overload,
    functional_overload,
    python_arguments,
    read_overload,
)
from opperf.operators.info import OpInfo

FRAMEWORK = "torch"
ATEN_PREFIX = "aten::"
# Suffixes of variant names that fold into the operator without them, where that operator exists.
VARIANT_SUFFIXES = ("_out", "_functional")


@dataclass(frozen=True)
class Registry:
    """Registered aten names, the distinct operators with a public entry point, and the names of
    those without one.

    ``entry_points`` maps each operator to every (namespace, Python name) that calls it.
    """

    registered_names: tuple[str, ...]
    operators: tuple[OpInfo, ...]
    unbound: tuple[str, ...]
    entry_points: Mapping[str, tuple[tuple[str, str], ...]]

    @functools.cached_property
    def by_name(self) -> dict[str, OpInfo]:
        """Every name (canonical and alias) to its operator; computed once, the registry being immutable."""
        return {name: op for op in self.operators for name in op.all_names}

    @functools.cached_property
    def by_entry_point(self) -> dict[tuple[str, str], OpInfo]:
        """(namespace, Python name) to the operator it calls."""
        return {point: op for op in self.operators for point in self.entry_points[op.name]}


def is_backward_name(name: str) -> bool:
    """Backward operators: ``convolution_backward``, ``_cdist_backward``, ``_backward``."""
    return "backward" in name


def fold_name(name: str, names: frozenset[str]) -> str:
    """The functional operator a registered name is a variant of (itself if none).

    >>> fold_name("_log_softmax", frozenset({"log_softmax", "_log_softmax"}))
    'log_softmax'
    """
    if name.startswith("__i") and f"__{name[3:]}" in names:  # __iand__ -> __and__
        return f"__{name[3:]}"
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    for suffix in VARIANT_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in names:
            name = name[: -len(suffix)]
    if name.startswith("_") and not name.startswith("__") and name[1:] in names:
        name = name[1:]
    return name


def group_variants(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Functional operator name -> every registered name folded into it (itself included)."""
    known = frozenset(names)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(known):
        groups[fold_name(name, known)].append(name)
    return {canonical: tuple(members) for canonical, members in groups.items()}


def operator_entry_points(canonical: str, members: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Where the operator is public: under its own name, else (in-place-only operators such as
    ``uniform_`` or ``fill_diagonal_``) as the ``torch.Tensor`` method of its in-place variant."""
    return entry_points(canonical) or tuple(
        point for name in members if name.endswith("_") for point in entry_points(name)
    )


def build_operator(
    canonical: str, members: tuple[str, ...], functional: Overload, exposed: tuple[tuple[str, str], ...]
) -> OpInfo:
    """The record of one group of variants, its arguments from ``functional`` as the first entry point
    of ``exposed`` names them. ``has_backward`` is a prior (the operator takes a tensor); measurement
    finds out whether autograd differentiates it."""
    namespace, function_name = exposed[0]
    arguments = python_arguments(functional, "self" if namespace == TENSOR_NAMESPACE else PYTHON_SELF_NAME)
    info = OpInfo(
        name=canonical,
        aliases=tuple(m for m in members if m != canonical),
        namespaces=tuple(dict.fromkeys(ns for ns, _ in exposed)),
        function_name=function_name,
        arguments=arguments,
        has_backward=any(a.is_tensor for a in arguments),
        framework=FRAMEWORK,
    )
    return replace(info, category=categorize(info))


@functools.cache
def load_registry() -> Registry:
    """Enumerate PyTorch's aten schemas (one pass per process; the result is immutable).

    Groups whose overloads neither take nor return tensors are TorchScript builtins (``aten::len``,
    ``aten::str``): registered names, but no operators.
    """
    import torch

    overloads: dict[str, list[Overload]] = defaultdict(list)
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith(ATEN_PREFIX):
            overload = read_overload(schema)
            overloads[overload.name].append(overload)
    operators, unbound, exposures = [], [], {}
    for canonical, members in sorted(group_variants(overloads).items()):
        functional = functional_overload([o for m in members for o in overloads[m]], canonical)
        if is_backward_name(canonical) or functional is None:
            continue
        exposed = operator_entry_points(canonical, members)
        if exposed:
            operators.append(build_operator(canonical, members, functional, exposed))
            exposures[canonical] = exposed
        else:
            unbound.append(canonical)
    return Registry(
        registered_names=tuple(sorted(overloads)),
        operators=tuple(operators),
        unbound=tuple(unbound),
        entry_points=exposures,
    )
