"""Operators across frameworks: names a user brings from another framework (what a selection error
offers instead), and how a comparison calls one operator in another namespace (``Counterpart``).

``conv2d`` is torch's name for what MXNet calls ``Convolution``; ``torch.nn.functional.cross_entropy``
is no one operator but a Python function calling two (``log_softmax``, then ``nll_loss``). Each
framework declares its names as data (``frameworks/<name>/counterparts.py``: (job, operator) pairs
in a shared vocabulary of jobs, and its functions that call several operators);
``tests/test_counterparts.py`` checks them against the registries. No framework is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from opperf.frameworks import FRAMEWORKS, framework_module


def _names(framework: str) -> ModuleType:
    return framework_module(framework, "counterparts")


def counterparts(framework: str, name: str) -> tuple[str, ...]:
    """``framework``'s operators doing a job another framework calls ``name``, in its table's order."""
    jobs = {
        job
        for other in FRAMEWORKS
        if other != framework
        for job, operator in _names(other).JOBS
        if operator == name
    }
    return tuple(dict.fromkeys(operator for job, operator in _names(framework).JOBS if job in jobs))


def several_operators(framework: str, name: str) -> tuple[str, ...]:
    """The operators ``framework``'s public function ``name`` calls, where it calls several; else ()."""
    return tuple(_names(framework).SEVERAL_OPERATORS.get(name, ()))


Name = str | Callable[[Mapping[str, Any]], str]
"""A counterpart's function name, or how to choose it from the configuration (conv1d/2d/3d)."""

Adapt = Callable[[Mapping[str, Any], dict[str, Any]], dict[str, Any]]
"""What a counterpart does to a translated configuration, given the source one: what an attribute the
counterpart lacks did to the tensors (``flatten=True`` flattened FullyConnected's data)."""


@dataclass(frozen=True)
class Counterpart:
    """How an operator of a comparison's first namespace is called in another one (``opperf
    compare``): the namespace and function, the attributes renamed, dropped (what the function infers
    from the tensors) or added, and what to do to the translated configuration. Each framework
    declares its own (``frameworks/<name>/compare.py``)."""

    namespace: str
    name: Name
    renames: Mapping[str, str] = field(default_factory=dict)
    drop: frozenset[str] = frozenset()
    extra: Mapping[str, Any] = field(default_factory=dict)
    adapt: Adapt | None = None

    def function_name(self, configuration: Mapping[str, Any]) -> str:
        return self.name if isinstance(self.name, str) else self.name(configuration)
