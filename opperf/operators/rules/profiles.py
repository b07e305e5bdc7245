"""Size profiles: the shapes generic rules draw from, as a parameter rather than copied constants."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LayerSizes:
    """Dimensions for hand-written layer rules: convolution images, dense features, sequences."""

    batch: int
    channels: int
    spatial: int
    features: int
    sequence: int


@dataclass(frozen=True)
class SizeProfile:
    """Shapes for one sweep size.

    ``shapes`` drive operators whose inputs share one shape (unary, reductions, ...), one input
    configuration per entry; ``broadcast_pairs`` drive binary operators (equal shapes, then a broadcast);
    ``layers`` sizes the hand-written rules (None: the profile has no configuration for them);
    ``category_shapes`` replaces ``shapes`` for categories whose operators need another layout (images
    are height x width x channels).
    """

    name: str
    shapes: tuple[tuple[int, ...], ...]
    broadcast_pairs: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    layers: LayerSizes | None
    needs_int64: bool = False
    category_shapes: Mapping[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)

    def shapes_for(self, category: str) -> tuple[tuple[int, ...], ...]:
        """The shapes generic rules use for an operator of ``category``."""
        return self.category_shapes.get(category, self.shapes)


STANDARD = SizeProfile(
    name="standard",
    shapes=((1024, 1024), (10000, 1), (10000, 100)),
    broadcast_pairs=(
        ((1024, 1024), (1024, 1024)),
        ((10000, 10), (10000, 10)),
        ((10000, 1), (10000, 100)),
    ),
    layers=LayerSizes(batch=32, channels=16, spatial=32, features=256, sequence=32),
    category_shapes={"image": ((224, 224, 3), (32, 32, 3))},
)

# More than 2**32 elements per tensor: exercises 64-bit indexing (MXNet built with INT64_TENSOR_SIZE).
INT64 = SizeProfile(
    name="int64",
    shapes=((2**32 + 1,), (2**16, 2**16 + 1)),
    broadcast_pairs=(((2**32 + 1,), (2**32 + 1,)), ((2**32 + 1, 1), (1, 1))),
    layers=None,
    needs_int64=True,
)

# Tiny shapes for tests and smoke runs.
SMALL = SizeProfile(
    name="small",
    shapes=((16, 16), (32, 1)),
    broadcast_pairs=(((16, 16), (16, 16)), ((32, 1), (32, 4))),
    layers=LayerSizes(batch=2, channels=4, spatial=8, features=8, sequence=4),
    category_shapes={"image": ((8, 8, 3),)},
)
