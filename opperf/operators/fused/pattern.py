"""One fused pattern as the catalogue describes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opperf.results.measurement import InputValue

Configure = Callable[..., dict[str, InputValue]]


@dataclass(frozen=True)
class Pattern:
    """One pattern: its layers in order, what it computes, and its input configurations.

    ``configure(*size)`` gives one configuration (``data``, the residual where the pattern adds one, and
    the layers' sizes as scalars); ``sizes`` are the sweep's, ``small`` the one tests run.
    """

    name: str
    layers: tuple[str, ...]
    computes: str
    configure: Configure
    sizes: tuple[tuple[int, ...], ...]
    small: tuple[int, ...]

    def configurations(self) -> list[dict[str, InputValue]]:
        return [self.configure(*size) for size in self.sizes]
