"""The row key: what a record is, and so which records ``diff``, ``ab``, ``history`` and ``merge``
compare. A record's identity (framework, namespace, operator, inputs) and every setting that changes
its figures: the run options marked keyed (``opperf.results.options``), then the stage and the fused
variant. Derived from the options, never listed by hand: an option marked keyed is in every key
with nothing else to change (DESIGN.md, "What a row is").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from opperf.results.draws import CONTIGUOUS, UNIFORM_POSITIVE
from opperf.results.options import KEYED

SETTINGS: tuple[str, ...] = (*(name for name in KEYED if name != "framework"), "stage", "variant")
"""The settings a row key holds beside its identity: every option marked keyed in ``RunOptions``
(the framework is part of the identity), then the stage and the fused variant. Derived, never
listed: an option marked keyed is in every key, in ``diff`` and in ``history``, with nothing else
to change."""
_ABSENT: Mapping[str, object] = {
    "stage": "eager",
    "variant": "",
    "values": UNIFORM_POSITIVE,
    "layout": CONTIGUOUS,
}
"""What a key holds for a setting a record, or a key a history store kept, leaves out: a null
variant is no variant; a key stored before ``values`` and ``layout`` were recorded was measured at
their defaults."""


def qualified(namespace: str, op: str) -> str:
    """How users call an operator: its namespace, then its registry name, the namespace's last part
    not said twice where the name begins with it (JAX's ``lax.exp`` in ``jax.lax`` is ``jax.lax.exp``,
    not ``jax.lax.lax.exp``)."""
    head, _, rest = op.partition(".")
    if rest and namespace.rpartition(".")[2] == head:
        return f"{namespace}.{rest}"
    return f"{namespace}.{op}"


@dataclass(frozen=True)
class Key:
    """What a row is: a record's identity (framework, namespace, operator, inputs in canonical JSON)
    and the settings that change its figures (``SETTINGS``, in that order). Rows are compared only
    when all of them agree; a setting reads as an attribute (``key.cache``)."""

    framework: str
    namespace: str
    op: str
    inputs: str
    settings: tuple[object, ...]

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.framework, self.namespace, self.op, self.inputs)

    @property
    def name(self) -> str:
        """How users call the operator (``qualified``)."""
        return qualified(self.namespace, self.op)

    @property
    def stage(self) -> str:
        return str(self.settings[SETTINGS.index("stage")])

    @property
    def variant(self) -> str:
        return str(self.settings[SETTINGS.index("variant")])

    def __getattr__(self, name: str) -> object:
        if name in SETTINGS:
            return self.settings[SETTINGS.index(name)]
        raise AttributeError(name)

    def drawn_otherwise(self) -> list[str]:
        """How its inputs were drawn where not as by default (``values normal``, ``layout strided``),
        as a row's label shows it; nothing for a setting left out (``diff --across``)."""
        return [
            f"{name} {getattr(self, name)}"
            for name in ("values", "layout")
            if getattr(self, name) not in (None, _ABSENT[name])
        ]

    def qualifiers(self) -> list[str]:
        """What a row's label says beside its name and inputs: the stage where not eager, the fused
        variant, and how its inputs were drawn where not as by default (``drawn_otherwise``)."""
        return (
            ([self.stage] if self.stage != "eager" else [])
            + ([self.variant] if self.variant else [])
            + self.drawn_otherwise()
        )

    def differing(self, other: Key) -> tuple[str, ...]:
        """The names of the settings in which two keys of one identity differ."""
        return tuple(
            name for name, a, b in zip(SETTINGS, self.settings, other.settings, strict=True) if a != b
        )

    def replacing(self, **settings: object) -> Key:
        """This key with the named settings changed (``threads=None``: every thread count as one)."""
        values = dict(zip(SETTINGS, self.settings, strict=True))
        unknown = set(settings) - set(values)
        if unknown:
            raise TypeError(f"a key has no setting {sorted(unknown)[0]!r}")
        values.update(settings)
        return replace(self, settings=tuple(values[name] for name in SETTINGS))

    def as_mapping(self) -> dict[str, object]:
        """The key as one flat object (identity and settings by name): how a history store keeps it."""
        return {
            "framework": self.framework,
            "namespace": self.namespace,
            "op": self.op,
            "inputs": self.inputs,
            **dict(zip(SETTINGS, self.settings, strict=True)),
        }

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object]) -> Key:
        """A key from its flat object (``as_mapping``; a setting it lacks as a record lacking it)."""
        framework = str(mapping["framework"])
        settings = {name: _setting(mapping, name) for name in SETTINGS}
        settings["profiler"] = _timer(framework, settings["profiler"])
        return cls(
            framework,
            str(mapping["namespace"]),
            str(mapping["op"]),
            str(mapping["inputs"]),
            tuple(settings[name] for name in SETTINGS),
        )


def _timer(framework: str, profiler: object) -> object:
    """The timer a record was measured by: ``native`` where its framework has no per-operator profiler
    is what records of such a framework said before each framework declared its timers (its native
    sampler fell back to Python's on every row), so they pair with the records that say ``python``."""
    from opperf.frameworks import FRAMEWORKS, describe

    if profiler == "native" and framework in FRAMEWORKS and "native" not in describe(framework).profilers:
        return "python"
    return profiler


def _setting(mapping: Mapping[str, object], name: str) -> object:
    value = mapping.get(name)
    return _ABSENT.get(name) if value is None and name in _ABSENT else value


def canonical_inputs(inputs: object) -> str:
    """Inputs as canonical JSON (sorted keys, no spaces), so equal configurations compare equal."""
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"))


def record_key(record: Mapping[str, Any]) -> Key:
    """A record's key: its identity, and each of ``SETTINGS`` as the record carries it (every one,
    in a file of schema version 2; an older file is migrated where it is read)."""
    return Key.from_mapping({**record, "inputs": canonical_inputs(record["inputs"])})
