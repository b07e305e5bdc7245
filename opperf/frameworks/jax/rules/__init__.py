"""JAX's input rules: which inputs each operator is benchmarked with, for a size profile.

Operators that cannot run alone are skipped with a stated reason (``skips``); hand-written layer
rules keyed by operator name (``layers.HAND_RULES``) win over inputs derived from the signature
(``derived``), where per-operator overrides (``overrides.OVERRIDES``) fix the arguments a signature
cannot say enough about.
"""

from __future__ import annotations

from opperf.frameworks.jax.rules.derived import Configurations, derive
from opperf.frameworks.jax.rules.layers import HAND_RULES
from opperf.frameworks.jax.rules.overrides import OVERRIDES
from opperf.frameworks.jax.rules.replay import REPLAY_POLICY
from opperf.frameworks.jax.rules.skips import DEVICE_SKIP_REASONS, SKIP_REASONS, skip_reason
from opperf.operators.info import OpInfo
from opperf.operators.rules.fuzz import ShapeConstraints, base_constraints
from opperf.operators.rules.generic import NoRuleError, in_argument_order, rule_name
from opperf.operators.rules.profiles import SizeProfile

NON_CONTIGUOUS_STORAGE = None
"""JAX arrays have no strides: fuzzed shapes marked non-contiguous stay dense."""

__all__ = [
    "DEVICE_SKIP_REASONS",
    "NON_CONTIGUOUS_STORAGE",
    "REPLAY_POLICY",
    "SKIP_REASONS",
    "inputs_for",
    "rule_for",
    "shape_constraints",
    "skip_reason",
]


def inputs_for(op: OpInfo, profile: SizeProfile, device_kind: str) -> Configurations:
    """The input configurations to benchmark the JAX operator ``op`` with; raises ``NoRuleError`` with
    the reason if there are none."""
    reason = skip_reason(op, device_kind)
    if reason:
        raise NoRuleError(reason)
    hand_rule = HAND_RULES.get(op.name)
    if hand_rule is None:
        return derive(op, profile, OVERRIDES)
    if profile.layers is None:
        raise NoRuleError(f"the {profile.name!r} size profile has no configuration for {op.name}")
    return [in_argument_order(op, config) for config in hand_rule(profile.layers)]


def rule_for(op: OpInfo, device_kind: str) -> str:
    """Which rule gives ``op`` its inputs on a device of ``device_kind``, for ``opperf explain``."""
    reason = skip_reason(op, device_kind)
    if reason:
        return f"none: skipped ({reason})"
    if op.name in HAND_RULES:
        return f"hand-written: {rule_name(HAND_RULES[op.name])}"
    derived = (
        "derived from the signature (opperf.frameworks.jax.rules.derived): by argument name, else by kind"
    )
    override = OVERRIDES.get(op.name)
    return f"{derived}, with the override {rule_name(override)}" if override else derived


def shape_constraints(op: OpInfo, profile: SizeProfile) -> ShapeConstraints:
    """What fuzzed shapes must keep for ``op``'s rule: the rank and fixed dimensions of the profile's
    shapes for its category; binary broadcasting operators may get a broadcast partner."""
    return base_constraints(profile, op.category, op.category == "binary_broadcast")
