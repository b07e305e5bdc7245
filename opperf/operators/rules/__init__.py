"""Input rules: which inputs each operator is benchmarked with, for a size profile.

Each framework keeps its rules in its own package (``opperf.frameworks.<name>.rules``, exposing
``inputs_for``); this module dispatches on the operator's framework. What the frameworks share lives
here: the size profiles (``profiles``) and the rule context and type defaults (``generic``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypeVar, cast

from opperf.frameworks import framework_module
from opperf.operators import fused, longtail
from opperf.operators.info import OpInfo
from opperf.operators.rules import replay
from opperf.operators.rules.fuzz import draw_shapes
from opperf.operators.rules.generic import NoRuleError
from opperf.operators.rules.profiles import STANDARD, SizeProfile
from opperf.results.measurement import InputValue, Storage, TensorSpec

T = TypeVar("T")

__all__ = [
    "STANDARD",
    "FuzzSettings",
    "NoRuleError",
    "SizeProfile",
    "distinct",
    "foreign_tensor",
    "fuzzed_inputs",
    "inputs_for",
    "replay_refusal",
]


def inputs_for(
    op: OpInfo, profile: SizeProfile = STANDARD, device_kind: str = "cpu"
) -> list[dict[str, InputValue]]:
    """The distinct input configurations to benchmark ``op`` with on a device of ``device_kind``;
    raises ``NoRuleError`` with the reason if there are none. Long-tail operators take their
    catalogue's, fused patterns their table's. A rule whose inputs do not follow the profile's shapes
    gives the same configuration for each of them: it is measured once (records are keyed by their
    inputs, and a result file holds one record per configuration)."""
    if op.category == longtail.CATEGORY:
        return distinct(longtail.inputs_for(op.name))
    if op.category == fused.CATEGORY:
        return distinct(fused.inputs_for(op.name))
    rules = framework_module(op.framework, "rules")
    return distinct(rules.inputs_for(op, profile, device_kind))


def replay_refusal(
    op: OpInfo, inputs: tuple[tuple[str, InputValue], ...], profile: SizeProfile, device_kind: str
) -> str | None:
    """Why a sweep refuses to run ``op`` with ``inputs`` from a configs file, or None when it runs
    them: the operator's skip reason, or an argument the file may not choose
    (``opperf.operators.rules.replay``).
    The values the rules themselves give ``op`` are always accepted."""
    rules = framework_module(op.framework, "rules")
    reason = rules.skip_reason(op, device_kind)
    if reason:
        return reason
    try:
        swept = inputs_for(op, profile, device_kind)
    except NoRuleError:  # no rule can make an argument the file now gives: its value is checked alone
        swept = []
    policy = rules.REPLAY_POLICY
    if profile.needs_int64:
        policy = replace(policy, max_elements=None)
    return replay.refusal(op, inputs, swept, policy)


def foreign_tensor(framework: str, inputs: Iterable[tuple[str, InputValue]]) -> str | None:
    """The first tensor of a replayed configuration ``framework`` can have none of (a dtype, storage
    or rank it lacks: ``replay.foreign_tensor``), or None."""
    return replay.foreign_tensor(inputs, framework_module(framework, "rules").REPLAY_POLICY)


def distinct(items: Iterable[T]) -> list[T]:
    """``items`` without repeats, in their order (they need not be hashable: inputs hold dicts)."""
    kept: list[T] = []
    for item in items:
        if item not in kept:
            kept.append(item)
    return kept


@dataclass(frozen=True)
class FuzzSettings:
    """How to draw an operator's shapes (``opperf.operators.rules.fuzz``): the mode (fuzz or skewed),
    the run's seed, how many configurations, and the most elements one tensor may have."""

    mode: str
    seed: int
    count: int
    max_elements: int


def fuzzed_inputs(
    op: OpInfo, profile: SizeProfile, device_kind: str, settings: FuzzSettings
) -> list[dict[str, InputValue]]:
    """``settings.count`` input configurations for ``op`` from drawn shapes, each made by the operator's
    own rule from a one-shape profile (so its rank, fixed dimensions and broadcasting hold); tensors of
    a draw marked non-contiguous become strided views where the framework has them. A draw that
    repeats an earlier configuration is dropped (records are keyed by their inputs)."""
    rules = framework_module(op.framework, "rules")
    inputs_for(op, profile, device_kind)  # the operator's skip reason, if it has one, before drawing
    constraints = rules.shape_constraints(op, profile)
    drawn = draw_shapes(
        op.name, settings.seed, settings.count, settings.mode, constraints, settings.max_elements
    )
    configurations: list[dict[str, InputValue]] = []
    for index, shape in enumerate(drawn):
        options = rules.inputs_for(op, shape.profile(profile, op.category), device_kind)
        config = options[index % len(options)]
        if not shape.contiguous and rules.NON_CONTIGUOUS_STORAGE:
            config = {name: _strided(value, rules.NON_CONTIGUOUS_STORAGE) for name, value in config.items()}
        configurations.append(config)
    return distinct(configurations)


def _strided(value: InputValue, storage: str) -> InputValue:
    """Dense tensors (of rank 1 or more) in ``storage``; everything else as it is."""
    if isinstance(value, tuple):
        return tuple(_strided(v, storage) for v in value)
    if (
        isinstance(value, TensorSpec)
        and value.storage == "default"
        and value.structure is None
        and value.shape
    ):
        return replace(value, storage=cast(Storage, storage))
    return value
