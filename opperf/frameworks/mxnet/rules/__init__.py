"""MXNet's input rules: which inputs each operator is benchmarked with, for a size profile.

Operators that cannot run standalone are skipped with a stated reason (``skips.SKIP_REASONS``);
hand-written rules keyed by operator name (layers, numpy, contrib, optimizers, quantized, detection,
sparse) win over inputs derived from the signature (``derived.derive_inputs``).
"""

from __future__ import annotations

from opperf.frameworks.mxnet.rules.contrib_ops import CONTRIB_RULES
from opperf.frameworks.mxnet.rules.derived import BROADCASTING_PREFIXES, derive_inputs
from opperf.frameworks.mxnet.rules.detection_ops import DETECTION_RULES
from opperf.frameworks.mxnet.rules.layers import DEFAULT_RULES
from opperf.frameworks.mxnet.rules.numpy_ops import NUMPY_RULES
from opperf.frameworks.mxnet.rules.optimizer_ops import OPTIMIZER_RULES
from opperf.frameworks.mxnet.rules.quantized_ops import QUANTIZED_RULES
from opperf.frameworks.mxnet.rules.replay import REPLAY_POLICY
from opperf.frameworks.mxnet.rules.skips import skip_reason
from opperf.frameworks.mxnet.rules.sparse_ops import SPARSE_RULES
from opperf.operators.info import OpInfo
from opperf.operators.rules.fuzz import ShapeConstraints, base_constraints
from opperf.operators.rules.generic import NoRuleError, rule_name
from opperf.operators.rules.profiles import SizeProfile
from opperf.results.measurement import InputValue

__all__ = [
    "NON_CONTIGUOUS_STORAGE",
    "REPLAY_POLICY",
    "inputs_for",
    "rule_for",
    "shape_constraints",
    "skip_reason",
]

NON_CONTIGUOUS_STORAGE = None
"""MXNet arrays are always contiguous: fuzzed shapes marked non-contiguous run contiguous here."""

HAND_WRITTEN_RULES = {
    **DEFAULT_RULES,
    **NUMPY_RULES,
    **CONTRIB_RULES,
    **OPTIMIZER_RULES,
    **QUANTIZED_RULES,
    **DETECTION_RULES,
    **SPARSE_RULES,
}


def inputs_for(op: OpInfo, profile: SizeProfile, device_kind: str) -> list[dict[str, InputValue]]:
    """The input configurations to benchmark the MXNet operator ``op`` with on a device of
    ``device_kind``; raises ``NoRuleError`` with the reason if there are none."""
    reason = skip_reason(op, device_kind)
    if reason:
        raise NoRuleError(reason)
    rule = HAND_WRITTEN_RULES.get(op.name)
    if rule is not None:
        if profile.layers is None:
            raise NoRuleError(f"the {profile.name!r} size profile has no configuration for {op.name}")
        return rule(profile.layers)
    return derive_inputs(op, profile)


def rule_for(op: OpInfo, device_kind: str) -> str:
    """Which rule gives ``op`` its inputs on a device of ``device_kind``, for ``opperf explain``."""
    reason = skip_reason(op, device_kind)
    if reason:
        return f"none: skipped ({reason})"
    rule = HAND_WRITTEN_RULES.get(op.name)
    if rule is not None:
        return f"hand-written: {rule_name(rule)}"
    return (
        "derived from the signature (opperf.frameworks.mxnet.rules.derived): tensors by argument name, "
        "required scalars by name (SCALAR_RULES) or else by type"
    )


def shape_constraints(op: OpInfo, profile: SizeProfile) -> ShapeConstraints:
    """What fuzzed shapes must keep for ``op``'s rule: the rank and fixed dimensions of the profile's
    shapes for its category; binary operators named as broadcasting may get a broadcast partner."""
    tensors = {a.name for a in op.tensor_arguments}
    broadcast = {"lhs", "rhs"} <= tensors and op.name.startswith(BROADCASTING_PREFIXES)
    return base_constraints(profile, op.category, broadcast)
