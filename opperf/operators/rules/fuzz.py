"""Fuzzed and skewed input shapes: seeded, per operator, capped, and framework-free.

``--shapes fuzz`` replaces the size profile's fixed shapes by ``--fuzz-count`` drawn ones per operator;
``--shapes skewed`` draws shapes where one dimension holds nearly all the elements. Each operator's
shapes come from its own generator, seeded by the run's seed and a stable hash of the operator's name,
so adding or removing an operator never shifts another's shapes and two processes draw the same ones.

Element counts are log-uniform within a regime (``REGIMES``: latency-bound, cache-resident,
bandwidth-bound), the regimes taken in turn so even a few draws span them. A drawn shape may have
singleton dimensions, a broadcast partner (some dimensions 1) for operators whose rule broadcasts,
and be marked non-contiguous (a framework that can make a strided view does). What an operator's rule
needs (the rank, dimensions it fixes, whether it broadcasts) arrives as ``ShapeConstraints``; each
drawn shape becomes a one-shape ``SizeProfile`` the operator's own rule turns into inputs.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from opperf.operators.rules.profiles import LayerSizes, SizeProfile

SHAPE_MODES = ("standard", "fuzz", "skewed")
"""``--shapes``: the size profile's fixed shapes, log-uniform fuzzed shapes, or skewed ones."""

REGIMES: dict[str, tuple[int, int]] = {
    "latency": (1, 2**12),
    "cache": (2**12, 2**18),
    "bandwidth": (2**18, 2**23),
}
"""Element-count ranges, [low, high), of a tensor: too small to be anything but call overhead, within
the caches, and streamed from memory."""

SINGLETON_CHANCE = 0.15
"""How often a fuzzed (not skewed) dimension is 1."""

BROADCAST_CHANCE = 0.5
"""How often a broadcasting operator's partner shape has singleton dimensions."""

NON_CONTIGUOUS_CHANCE = 0.25
"""How often a drawn shape is marked non-contiguous."""

MEMORY_SHARE = 1 / 64
"""The share of available memory one tensor may take: inputs, outputs, gradients, a cold rotation's
copies and a strided view's double width together stay well within it."""


FIXED_EXTENT = 4
"""A dimension all of a rule's base shapes give the same extent of at most this is one the rule needs."""


@dataclass(frozen=True)
class ShapeConstraints:
    """What an operator's rule needs of its base shape: the rank, dimensions it fixes as (axis, extent)
    pairs (an image's 3 channels), and whether its second tensor may broadcast against the first."""

    rank: int
    fixed: tuple[tuple[int, int], ...] = ()
    broadcast: bool = False


@dataclass(frozen=True)
class FuzzedShape:
    """One drawn input configuration: the base shape, its broadcast partner (the shape itself when it
    does not broadcast), layer sizes for hand-written layer rules, the regime it was drawn in, and
    whether its tensors should be non-contiguous views."""

    shape: tuple[int, ...]
    partner: tuple[int, ...]
    layers: LayerSizes
    regime: str
    contiguous: bool = True

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    def profile(self, base: SizeProfile, category: str) -> SizeProfile:
        """The one-shape size profile the operator's rule turns into this configuration's inputs."""
        return replace(
            base,
            name="fuzz",
            shapes=(self.shape,),
            broadcast_pairs=((self.shape, self.partner),),
            layers=self.layers,
            category_shapes={category: (self.shape,)},
        )


def base_constraints(profile: SizeProfile, category: str, broadcast: bool) -> ShapeConstraints:
    """The constraints a rule written for ``profile``'s shapes of ``category`` implies: their rank, and
    the dimensions every one of them gives the same small extent (an image's channels)."""
    shapes = profile.shapes_for(category)
    rank = len(shapes[0])
    fixed = tuple(
        (axis, shapes[0][axis])
        for axis in range(rank)
        if len({shape[axis] for shape in shapes}) == 1 and shapes[0][axis] <= FIXED_EXTENT
    )
    return ShapeConstraints(rank=rank, fixed=fixed, broadcast=broadcast)


def operator_seed(seed: int, op: str) -> int:
    """The seed of ``op``'s shapes: a stable hash (not Python's salted ``hash``) of the run's seed and
    the operator's name."""
    digest = hashlib.sha256(f"{seed}\0{op}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def memory_cap_elements(available_bytes: int | None, itemsize: int, ceiling: int) -> int:
    """The most elements one tensor may have: ``MEMORY_SHARE`` of ``available_bytes`` (``ceiling``
    when unknown), never below one."""
    if available_bytes is None:
        return ceiling
    return max(1, min(ceiling, int(available_bytes * MEMORY_SHARE) // max(1, itemsize)))


def draw_shapes(
    op: str,
    seed: int,
    count: int,
    mode: str,
    constraints: ShapeConstraints,
    max_elements: int,
) -> tuple[FuzzedShape, ...]:
    """``count`` shapes for ``op`` in ``mode`` (fuzz or skewed), none above ``max_elements`` elements."""
    rng = random.Random(operator_seed(seed, op))
    regimes = tuple(REGIMES)
    return tuple(
        _draw(rng, regimes[index % len(regimes)], mode, constraints, max_elements) for index in range(count)
    )


def _draw(
    rng: random.Random, regime: str, mode: str, constraints: ShapeConstraints, max_elements: int
) -> FuzzedShape:
    low, high = REGIMES[regime]
    target = min(max_elements, _log_uniform(rng, low, high))
    fixed = dict(constraints.fixed)
    free = [axis for axis in range(constraints.rank) if axis not in fixed]
    budget = max(1, target // max(1, math.prod(fixed.values())))
    extents = _skewed(rng, budget, len(free)) if mode == "skewed" else _spread(rng, budget, len(free))
    shape = [0] * constraints.rank
    for axis, extent in fixed.items():
        shape[axis] = extent
    for axis, extent in zip(free, extents, strict=True):
        shape[axis] = extent
    shape = _capped(shape, free, max_elements)
    partner = shape
    if constraints.broadcast and free and rng.random() < BROADCAST_CHANCE:
        ones = set(rng.sample(free, rng.randint(1, len(free))))
        partner = [1 if axis in ones else extent for axis, extent in enumerate(shape)]
    return FuzzedShape(
        shape=tuple(shape),
        partner=tuple(partner),
        layers=_layers(rng, target),
        regime=regime,
        contiguous=rng.random() >= NON_CONTIGUOUS_CHANCE,
    )


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return max(1, int(math.exp(rng.uniform(math.log(low), math.log(high)))))


def _spread(rng: random.Random, elements: int, dims: int) -> list[int]:
    """``dims`` extents whose product is about ``elements``, split at random in log space, some 1."""
    if dims == 0:
        return []
    weights = [0.0 if rng.random() < SINGLETON_CHANCE else rng.random() + 0.05 for _ in range(dims)]
    total = sum(weights) or 1.0
    return [max(1, round(elements ** (w / total))) for w in weights]


def _skewed(rng: random.Random, elements: int, dims: int) -> list[int]:
    """``dims`` extents where one, at random, holds nearly all ``elements`` and the others are 1 or 2."""
    if dims == 0:
        return []
    extents = [rng.choice((1, 2)) for _ in range(dims)]
    big = rng.randrange(dims)
    extents[big] = max(1, elements // math.prod(e for i, e in enumerate(extents) if i != big))
    return extents


def _capped(shape: list[int], free: Sequence[int], max_elements: int) -> list[int]:
    """``shape`` with its largest free dimensions shrunk until it has at most ``max_elements``."""
    shape = list(shape)
    while math.prod(shape) > max_elements and free:
        axis = max(free, key=lambda a: shape[a])
        if shape[axis] == 1:
            break
        shape[axis] = max(1, shape[axis] * max_elements // math.prod(shape))
    return shape


def _layers(rng: random.Random, elements: int) -> LayerSizes:
    """Layer sizes whose activations (batch x channels x spatial^2) are about ``elements``: the batch,
    channels and spatial extent drawn in log space within bounds the hand-written layer rules take."""
    spatial = max(8, min(64, round(elements ** rng.uniform(0.2, 0.35))))
    rest = max(1, elements // (spatial * spatial))
    batch = max(1, min(32, round(rest ** rng.uniform(0.2, 0.6))))
    channels = max(2, min(256, 2 * (rest // batch // 2)))
    features = max(8, min(2048, round(elements**0.5)))
    return LayerSizes(
        batch=batch,
        channels=channels,
        spatial=spatial,
        features=features,
        sequence=max(2, min(64, batch * 2)),
    )


def shapes_checksum(configurations: Iterable[tuple[str, object]]) -> str:
    """A SHA-256 of (operator, described inputs) pairs in a stable order: two runs with equal checksums
    generated the same shapes."""
    lines = sorted(json.dumps([op, inputs], sort_keys=True) for op, inputs in configurations)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
