"""What a framework is to opperf, declared as data: each framework package states its ``FRAMEWORK``
(``frameworks/<name>/__init__.py``), which opperf reads without importing the framework itself.

The parts every framework package has (``PARTS``: its backend, session, registry, namespaces,
categories, rules, work counters, devices, profiling, flags, counterpart names and compare calls)
are modules of the same names; the parts a framework may lack are capabilities it declares
(``CAPABILITIES``): opperf's long-tail operators written in it, fused patterns, model capture, and
in-place forms of its operators (``--in-place``).
A framework without one is asked for nothing of it: its sweeps have no long-tail or fused rows, and
``capture``, ``model`` and ``sweep --configs MODEL`` say it has none.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass

PARTS: tuple[str, ...] = (
    "backend",
    "session",
    "registry",
    "namespaces",
    "categories",
    "rules",
    "work",
    "devices",
    "profiling",
    "flags",
    "counterparts",
    "compare",
)
"""The modules every framework package has."""

CAPABILITIES: dict[str, tuple[str, ...]] = {
    "longtail": ("longtail",),
    "fused": ("fused",),
    "capture": ("capture", "models", "model_profile"),
    "in_place": ("in_place",),
}
"""Each optional capability, with the modules a framework that declares it has."""

CAPABILITY_NAMES: dict[str, str] = {
    "longtail": "long-tail operators",
    "fused": "fused patterns",
    "capture": "model capture",
    "in_place": "in-place forms",
}
"""How messages name each capability."""


@dataclass(frozen=True)
class Framework:
    """One framework as opperf knows it before importing it: its name (also its package under
    ``opperf.frameworks`` and its pip extra), how messages name it, the module it is imported as, its
    backend class (``module:Class`` in its package), how its Python wrappers document a tensor
    argument, which functions and namespaces are its own, the capabilities it declares, and the
    memory layouts its tensors can take beyond contiguous (``opperf.operators.layouts``), with what
    to say where they cannot."""

    name: str
    display_name: str
    imports: str
    backend: str
    documented_tensor: re.Pattern[str]
    owns: Callable[[Callable[..., object]], bool]
    owns_namespace: Callable[[str], bool]
    namespaces: str
    """Its user-facing namespaces, as an error that names them shows them (``mx.nd, mx.np, ...``)."""
    capabilities: frozenset[str] = frozenset()
    layouts: frozenset[str] = frozenset()
    layout_note: str = ""
    """Why its tensors have no other layouts, where they have none."""
    in_place_note: str = ""
    """Why it has no in-place forms, where it declares none."""
    profilers: tuple[str, ...] = ("native", "python")
    """The timers it has (``--profiler``), the one a run takes by default first."""
    profiler_note: str = ""
    """Why it has no per-operator profiler (``native``), where it has none."""
    work_note: str = ""
    """Where a configuration's work comes from when opperf has no counter for its operator (its
    ``work`` module's ``COUNTERS``), where the framework counts it itself (``Passes.work``)."""
    keeps_compiled: bool = False
    """Whether its workers keep what they compile in a folder their runner makes for them
    (``Backend.keep_compiled``); a runner makes none for a framework that does not."""
    checked_settings: tuple[str, ...] = ()
    """How the names begin of the environment settings it reads as it is imported or starts where a
    value it cannot take kills the process (a C++ ``terminate``: MXNet's ``OMP_NUM_THREADS=banana``) or
    fails its every operation (``MXNET_ENGINE_TYPE=banana``). Where one is set, opperf starts it in a
    child process first (``opperf.frameworks.start_check``)."""
    stages: tuple[str, ...] = ("eager",)
    """The stages it runs (``opperf.measure.stages``); a sweep's other stages are recorded skipped with
    their reason, and one that asks for none of these is refused."""

    def __post_init__(self) -> None:
        unknown = self.capabilities - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"{self.name} declares unknown capabilities {sorted(unknown)}")

    @property
    def installed(self) -> bool:
        """Whether the framework's module can be imported here (found, not imported)."""
        return importlib.util.find_spec(self.imports) is not None

    def can(self, capability: str) -> bool:
        """Whether the framework declares ``capability`` (one of ``CAPABILITIES``)."""
        return capability in self.capabilities
