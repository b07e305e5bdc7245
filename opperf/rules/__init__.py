"""Input rules: which inputs each operator is benchmarked with, for a size profile.

Hand-written defaults (``defaults.DEFAULT_RULES``) win over rules derived from the signature
(``generic.derive_inputs``); operators that cannot run standalone are skipped with a stated reason
(``skips.SKIP_REASONS``).
"""

from __future__ import annotations

import importlib

from opperf.rules.contrib_ops import CONTRIB_RULES
from opperf.rules.defaults import DEFAULT_RULES
from opperf.rules.detection_ops import DETECTION_RULES
from opperf.rules.generic import NoRuleError, derive_inputs
from opperf.rules.numpy_ops import NUMPY_RULES
from opperf.rules.optimizer_ops import OPTIMIZER_RULES
from opperf.rules.profiles import STANDARD, SizeProfile
from opperf.rules.quantized_ops import QUANTIZED_RULES
from opperf.rules.skips import DEVICE_SKIP_REASONS, SKIP_REASONS
from opperf.rules.sparse_ops import SPARSE_RULES
from opperf.utils.op_info import OpInfo
from opperf.utils.results import InputValue

HAND_WRITTEN_RULES = {
    **DEFAULT_RULES,
    **NUMPY_RULES,
    **CONTRIB_RULES,
    **OPTIMIZER_RULES,
    **QUANTIZED_RULES,
    **DETECTION_RULES,
    **SPARSE_RULES,
}

__all__ = ["STANDARD", "NoRuleError", "SizeProfile", "inputs_for"]


# Frameworks whose rules live in a module of their own, exposing the same ``inputs_for`` function.
FRAMEWORK_RULE_MODULES = {"torch": "opperf.rules.torch_ops"}


def inputs_for(
    op: OpInfo, profile: SizeProfile = STANDARD, device_kind: str = "cpu"
) -> list[dict[str, InputValue]]:
    """The input configurations to benchmark ``op`` with on a device of ``device_kind``; raises
    ``NoRuleError`` with the reason if there are none."""
    if op.framework in FRAMEWORK_RULE_MODULES:
        module = importlib.import_module(FRAMEWORK_RULE_MODULES[op.framework])
        return module.inputs_for(op, profile, device_kind)
    reason = SKIP_REASONS.get(op.name) or DEVICE_SKIP_REASONS.get(device_kind, {}).get(op.name)
    if reason:
        raise NoRuleError(reason)
    rule = HAND_WRITTEN_RULES.get(op.name)
    if rule is not None:
        if profile.layers is None:
            raise NoRuleError(f"the {profile.name!r} size profile has no configuration for {op.name}")
        return rule(profile.layers)
    return derive_inputs(op, profile)
