"""One long-tail operator as the catalogue describes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opperf.results.measurement import InputValue

Configure = Callable[..., dict[str, InputValue]]


@dataclass(frozen=True)
class LongTailOp:
    """One long-tail operator: its tags, where it comes from, what it computes, and its inputs.

    ``configure(*size)`` gives one input configuration; ``sizes`` are the sweep's, ``small`` the one
    the cross-framework test runs. ``differentiable`` is False for an output that is piecewise
    constant in every input (a level, an index): its gradient is zero wherever it exists, so no
    backward pass is timed.
    """

    name: str
    tags: tuple[str, ...]
    origin: str
    source: str
    computes: str
    configure: Configure
    sizes: tuple[tuple[int, ...], ...]
    small: tuple[int, ...]
    differentiable: bool = True

    def configurations(self) -> list[dict[str, InputValue]]:
        return [self.configure(*size) for size in self.sizes]
