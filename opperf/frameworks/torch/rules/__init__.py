"""PyTorch's input rules: which inputs each operator is benchmarked with, for a size profile.

Operators that cannot run standalone are skipped with a stated reason (``SKIP_REASONS``); hand-written
layer rules keyed by operator name win over inputs derived from the aten schema (``derived``), where
per-operator overrides (``OVERRIDES``) fix the arguments a schema cannot say enough about.
"""

from opperf.frameworks.torch.rules.derived import (
    DEVICE_SKIP_REASONS,
    HAND_RULES,
    MATRIX_OVERRIDES,
    OVERRIDES,
    SKIP_REASONS,
    inputs_for,
    skip_reason,
)
from opperf.op_info import OpInfo
from opperf.rules.generic import rule_name

__all__ = ["DEVICE_SKIP_REASONS", "SKIP_REASONS", "inputs_for", "rule_for"]


def rule_for(op: OpInfo, device_kind: str) -> str:
    """Which rule gives ``op`` its inputs on a device of ``device_kind``, for ``opperf explain``."""
    reason = skip_reason(op, device_kind)
    if reason:
        return f"none: skipped ({reason})"
    if op.name in HAND_RULES:
        return f"hand-written: {rule_name(HAND_RULES[op.name])}"
    override = OVERRIDES.get(op.name) or MATRIX_OVERRIDES.get(op.name)
    derived = (
        "derived from the aten schema (opperf.frameworks.torch.rules.derived): by argument name, else by type"
    )
    return f"{derived}, with the override {rule_name(override)}" if override else derived
