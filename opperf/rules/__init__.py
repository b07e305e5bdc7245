"""Input rules: which inputs each operator is benchmarked with, for a size profile.

Each framework keeps its rules in its own package (``opperf.frameworks.<name>.rules``, exposing
``inputs_for``); this module dispatches on the operator's framework. What the frameworks share lives
here: the size profiles (``profiles``) and the rule context and type defaults (``generic``).
"""

from __future__ import annotations

import importlib

from opperf import longtail
from opperf.op_info import OpInfo
from opperf.results import InputValue
from opperf.rules.generic import NoRuleError
from opperf.rules.profiles import STANDARD, SizeProfile

__all__ = ["STANDARD", "NoRuleError", "SizeProfile", "inputs_for"]


def inputs_for(
    op: OpInfo, profile: SizeProfile = STANDARD, device_kind: str = "cpu"
) -> list[dict[str, InputValue]]:
    """The input configurations to benchmark ``op`` with on a device of ``device_kind``; raises
    ``NoRuleError`` with the reason if there are none. Long-tail operators take their catalogue's."""
    if op.category == longtail.CATEGORY:
        return longtail.inputs_for(op.name)
    rules = importlib.import_module(f"opperf.frameworks.{op.framework}.rules")
    return rules.inputs_for(op, profile, device_kind)
