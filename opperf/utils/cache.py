"""Cold-cache measurement: how many input sets to rotate through so none is still cached when reused.

Measured hot (the default), an operator reads inputs the previous pass left in the last-level cache, so a
memory-bound operator on tensors smaller than that cache is timed at cache bandwidth, not memory's.
Measured cold, each pass takes the next of several input sets whose total is well beyond the cache.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

CACHE_MODES = ("hot", "cold")

EVICTION_FACTOR = 2
"""Rotated input sets total at least this many times the last-level cache: with LRU-like replacement, a
set is evicted by the time its turn comes again."""

MAX_INPUT_SETS = 64
"""Operators on tiny tensors would need thousands of sets; beyond this many, setup costs dominate."""

_CACHE_FOLDER = Path("/sys/devices/system/cpu/cpu0/cache")
_SIZE_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3}


@functools.cache
def last_level_cache_bytes() -> int | None:
    """The largest data or unified cache of CPU 0, from sysfs; None where it cannot be read. Read
    once a process: every configuration's preparation asks, and reading took 0.14 ms (1.7 s of a
    full-registry A/B job's 12,000 preparations)."""
    sizes = []
    for index in _CACHE_FOLDER.glob("index*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            sizes.append(_parse_size((index / "size").read_text().strip()))
        except (OSError, ValueError):
            continue
    return max(sizes, default=None)


def _parse_size(text: str) -> int:
    """``"32768K"`` -> 33554432."""
    unit = _SIZE_UNITS.get(text[-1:].upper())
    return int(text[:-1]) * unit if unit else int(text)


def input_sets(mode: str, bytes_per_set: int, cache_bytes: int | None) -> int:
    """How many input sets to rotate through: 1 when hot, enough to exceed the cache when cold.

    >>> input_sets("cold", 8 * 2**20, 32 * 2**20)
    8
    """
    if mode not in CACHE_MODES:
        raise ValueError(f"unknown cache mode {mode!r}; choose one of: {', '.join(CACHE_MODES)}")
    if mode == "hot" or not cache_bytes or bytes_per_set <= 0:
        return 1
    return max(1, min(MAX_INPUT_SETS, math.ceil(EVICTION_FACTOR * cache_bytes / bytes_per_set)))
