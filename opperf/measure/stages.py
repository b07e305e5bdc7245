"""Execution stages: how an operator runs, and the check that a staged run computes what eager does.

``eager`` calls the operator as written; ``graph`` captures it first (MXNet: a HybridBlock hybridized
with static allocation and shapes, a CachedOp; PyTorch: ``torch.jit``); ``compile`` compiles it
(PyTorch: ``torch.compile`` with inductor; MXNet has none). Each framework's session builds a stage's
passes; the time to capture or compile is measured once (``compile_s``, never a sample) and the staged
outputs are compared with eager ones here, framework-free, on numpy arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

EAGER = "eager"
STAGES: tuple[str, ...] = (EAGER, "graph", "compile", "cudagraph", "fused")
"""``cudagraph`` captures calls in a CUDA graph and replays them (PyTorch on a GPU: launch-free
time); ``fused`` is a fused pattern's fusion backends (``opperf.operators.fused``); other operators have
none."""
IN_PLACE = "in-place"
"""The variant of an eager record that calls the operator's in-place form (``--in-place``: PyTorch's
``abs_``, MXNet's ``out=`` writes), beside its own row."""
TOLERANCE = 1e-4
"""rtol and atol of the check against eager."""


@dataclass(frozen=True)
class StageCheck:
    """A staged run's outputs against eager ones: whether they agree within ``TOLERANCE`` (relative
    and absolute), the largest absolute difference, and what differed when they do not agree.

    A fused pattern's variant adds the operators its optimised graph runs (``graph_ops``) and whether
    that graph fused any of the pattern's layers (``fused``): the proof, read from the graph.
    """

    agrees: bool
    max_abs_diff: float | None
    detail: str | None = None
    graph_ops: tuple[str, ...] | None = None
    fused: bool | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "agrees": self.agrees,
            "max_abs_diff": self.max_abs_diff,
            "rtol": TOLERANCE,
            "atol": TOLERANCE,
            "detail": self.detail,
            **(
                {"graph_ops": list(self.graph_ops), "fused": self.fused} if self.graph_ops is not None else {}
            ),
        }

    @classmethod
    def from_json(cls, block: dict[str, Any] | None) -> StageCheck | None:
        if not block:
            return None
        graph_ops = block.get("graph_ops")
        return cls(
            bool(block["agrees"]),
            block.get("max_abs_diff"),
            block.get("detail"),
            tuple(graph_ops) if graph_ops is not None else None,
            block.get("fused"),
        )


def compare(reference: Sequence[np.ndarray], staged: Sequence[np.ndarray]) -> StageCheck:
    """Whether ``staged`` outputs match eager ones: as many, of the same element counts, and close.

    Shapes may differ by size-one axes only (MXNet's legacy arrays have no 0-d scalar); booleans and
    integers compare as numbers.
    """
    if len(reference) != len(staged):
        return StageCheck(False, None, f"{len(staged)} outputs, eager gives {len(reference)}")
    largest = 0.0
    for index, pair in enumerate(zip(reference, staged, strict=True)):
        outcome = _compare_one(index, *pair)
        if isinstance(outcome, StageCheck):
            return outcome
        largest = max(largest, outcome)
    return StageCheck(True, largest)


def _compare_one(index: int, reference: np.ndarray, staged: np.ndarray) -> StageCheck | float:
    """The largest absolute difference of one output, or the failed check."""
    expected, actual = np.asarray(reference), np.asarray(staged)
    if _squeezed(expected.shape) != _squeezed(actual.shape):
        return StageCheck(False, None, f"output {index} has shape {actual.shape}, eager {expected.shape}")
    # Complex outputs (an FFT's) compare as complex numbers: a float64 view would drop their
    # imaginary parts, and a stage that got them wrong would agree with eager.
    as_number = np.complex128 if np.iscomplexobj(expected) or np.iscomplexobj(actual) else np.float64
    expected = expected.astype(as_number).reshape(-1)
    actual = actual.astype(as_number).reshape(-1)
    if not np.array_equal(np.isfinite(expected), np.isfinite(actual)):
        return StageCheck(False, None, f"output {index} is not finite where eager's is, or the reverse")
    finite = np.isfinite(expected)
    largest = float(np.abs(expected - actual)[finite].max()) if finite.any() else 0.0
    if not np.allclose(actual, expected, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True):
        return StageCheck(False, largest, f"output {index} differs from eager beyond rtol=atol={TOLERANCE}")
    return largest


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def check_stages(stages: object) -> None:
    """Raise ValueError unless ``stages`` is a non-empty tuple of distinct known stage names."""
    if not isinstance(stages, tuple) or not stages:
        raise ValueError(f"must name at least one stage of {', '.join(STAGES)}, got {stages!r}")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown stage {unknown[0]!r}; choose from {', '.join(STAGES)}")
    if len(set(stages)) != len(stages):
        raise ValueError(f"names a stage twice: {','.join(stages)}")


def parse_stages(text: str) -> tuple[str, ...]:
    """``eager,graph`` as a tuple of stage names (checked by ``check_stages``)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())
