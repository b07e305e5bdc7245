"""A record's inputs as one line of text, the way every report, table and diff shows them: tensors
as their shapes (``data=32x16``, a list of tensors in brackets), other arguments as their values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opperf.results.measurement import NON_FINITE_KEY


def describe_inputs(inputs: Mapping[str, Any]) -> str:
    """``inputs`` (a record's ``inputs`` object) as ``name=value`` pairs: ``lhs=1024x1024, axis=1``."""
    return ", ".join(f"{name}={_shown(value)}" for name, value in inputs.items())


def _shown(value: object) -> str:
    if isinstance(value, dict) and "shape" in value:
        return "x".join(map(str, value["shape"])) or "scalar"
    if isinstance(value, list) and value and all(isinstance(v, dict) and "shape" in v for v in value):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict) and set(value) == {NON_FINITE_KEY}:
        return str(value[NON_FINITE_KEY])
    if isinstance(value, list):
        return "(" + ", ".join(map(_shown, value)) + ")"
    return str(value)
