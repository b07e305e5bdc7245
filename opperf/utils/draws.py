"""Remembered random draws: the same tensor values drawn from the same generator state are drawn once.

A sweep seeds each configuration's generator with the same seed, so the first input of most
configurations (a (1024, 1024) tensor uniform in [0.1, 1)) is the same values every time: in a unary,
binary and reduction sweep 95% of the tensors drawn repeat one drawn before. Drawing them again costs
a few milliseconds each (10 to 20 ms per PyTorch configuration), outside the measured passes. A
``DrawCache`` keeps recent draws keyed by what was drawn and the generator's state before the draw;
a hit hands back the kept values and moves the generator to the state the draw left it in, so every
configuration gets exactly the values, and its generator exactly the state, it would have had.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Values = TypeVar("Values")

CAPACITY_BYTES = 64 * 2**20
"""What one cache keeps at most: sixteen standard (1024, 1024) float32 tensors."""


@dataclass(frozen=True)
class GeneratorState:
    """How to read a generator's state (``key``: a hashable form; ``read``: the state itself, as
    ``restore`` takes it) and put a generator back into one."""

    key: Callable[[Any], Hashable]
    read: Callable[[Any], object]
    restore: Callable[[Any, Any], None]


class DrawCache(Generic[Values]):
    """Recent draws (least recently used go first once ``capacity_bytes`` is exceeded).

    ``size`` gives a draw's bytes; ``copy`` what the caller receives of kept values (a copy where the
    caller may change them in place, so the kept values never change)."""

    def __init__(
        self,
        state: GeneratorState,
        size: Callable[[Values], int],
        copy: Callable[[Values], Values],
        capacity_bytes: int = CAPACITY_BYTES,
    ) -> None:
        self._state = state
        self._size = size
        self._copy = copy
        self._capacity = capacity_bytes
        self._entries: OrderedDict[Hashable, tuple[Values, object, int]] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def draw(self, what: Hashable, generator: object, make: Callable[[], Values]) -> Values:
        """``make()`` (which draws ``what`` from ``generator``), or the values it gave before from the
        same generator state, the generator then moved past the draw as ``make`` would have."""
        key = (what, self._state.key(generator))
        kept = self._entries.get(key)
        if kept is not None:
            self._entries.move_to_end(key)
            values, after, _ = kept
            self._state.restore(generator, after)
            self.hits += 1
            return self._copy(values)
        self.misses += 1
        values = make()
        size = self._size(values)
        if size <= self._capacity:
            self._entries[key] = (values, self._state.read(generator), size)
            self._bytes += size
            while self._bytes > self._capacity:
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
            return self._copy(values)
        return values

    @property
    def kept_bytes(self) -> int:
        return self._bytes


def drawn(
    draws: DrawCache[Values] | None, what: Hashable, generator: object, make: Callable[[], Values]
) -> Values:
    """``make()``, through ``draws`` when there is a cache (``DrawCache.draw``)."""
    return make() if draws is None else draws.draw(what, generator, make)
