"""Shards: a sweep split across machines (``sweep --shard K/N``), balanced and stable.

Operators are laid on a ring in the order of a hash of their names, and the ring is cut into N arcs
of equal expected cost (an operator's cost is its number of input configurations, each of which
adaptive sampling spends at most the same budget on). The partition is therefore:

- deterministic: it depends on the operator names and costs alone, not on the machine or the order
  the registry lists them in;
- balanced: each shard's expected cost is within one operator's cost of total / N;
- stable: adding or removing an operator moves only the operators next to the cuts (at most its cost
  on each), not the whole assignment, as a round-robin or a sort by cost would.

With measured costs (``sweep --costs``: what each operator cost a previous sweep), balance matters
more than stability, and a few operators can cost a large part of a shard (a Python NMS loop took 20 s
of a 65 s quarter of the MXNet registry): ``balanced`` assigns the operators longest first, each to
the shard with the least so far (ties to the lower ring position and shard), which keeps the largest
shard within the largest operator of the mean, deterministic for the same costs.

``opperf merge`` puts the shards' result files back together.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opperf.utils.errors import OpperfError

MOST_SHARDS = 10_000
"""The most shards a sweep splits into: ten times the operators of the largest registry (PyTorch's
790), where a mistyped count (``--shard 1/99999999``) would plan that many empty shards."""


def check_count(count: int) -> int:
    """``count`` shards, refused (OpperfError) above ``MOST_SHARDS``."""
    if count > MOST_SHARDS:
        raise OpperfError(
            f"{count} shards: at most {MOST_SHARDS:,} (ten times the largest registry's operators); "
            "choose fewer"
        )
    return count


@dataclass(frozen=True, order=True)
class Shard:
    """Shard ``index`` (1-based, as users write it) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        check_count(self.count)

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> Shard(2, 4); OpperfError naming the expected form otherwise."""
        index, slash, count = text.partition("/")
        try:
            numbers = (int(index), int(count))
        except ValueError:
            numbers = None
        if not slash or numbers is None or not 1 <= numbers[0] <= numbers[1]:
            raise OpperfError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
        return cls(*numbers)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def ring_position(name: str) -> int:
    """Where an operator sits on the ring: a stable hash of its name (not Python's salted hash)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


def partition(costs: Mapping[str, float], count: int) -> list[list[str]]:
    """The operators of each of ``count`` shards, in ring order."""
    ordered = sorted(costs, key=lambda name: (ring_position(name), name))
    total = sum(costs[name] for name in ordered)
    shards: list[list[str]] = [[] for _ in range(count)]
    before = 0.0
    for name in ordered:
        middle = before + costs[name] / 2  # an operator goes where the middle of its cost falls
        shards[min(int(middle * count / total), count - 1) if total else 0].append(name)
        before += costs[name]
    return shards


def balanced_partition(costs: Mapping[str, float], count: int) -> list[list[str]]:
    """The operators of each of ``count`` shards, longest first to the least loaded shard (the first
    of those equally loaded)."""
    loads = [(0.0, index) for index in range(count)]  # a heap: already ordered
    shards: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(costs, key=lambda name: (-costs[name], ring_position(name), name)):
        load, least = heapq.heappop(loads)
        shards[least].append(name)
        heapq.heappush(loads, (load + costs[name], least))
    return shards


def placed(
    names: Sequence[str], costs: Mapping[str, float], count: int, balanced: bool = False
) -> list[list[str]]:
    """``names`` split into ``count`` shards (each in the names' own order): on the ring, or
    ``balanced``; partitioned once, whatever the count."""
    split = balanced_partition if balanced else partition
    shard_of = {name: index for index, shard in enumerate(split(costs, count)) for name in shard}
    shards: list[list[str]] = [[] for _ in range(count)]
    for name in names:
        shards[shard_of[name]].append(name)
    return shards
