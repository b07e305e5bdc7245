"""The shape-sensitivity view of a fuzzed sweep: per operator, time per element against element count.

A sweep run with ``--shapes fuzz`` or ``skewed`` measures each operator on drawn shapes from
latency-bound to bandwidth-bound sizes; sorted by element count, the time per element shows where the
fixed cost of a call stops dominating and whether the operator keeps its per-element speed once its
data leaves the caches (or on a skewed, singleton or strided layout).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opperf.results.record import Record
from opperf.utils.markdown_table import markdown_table

HEADERS = ("Operator", "Largest tensor", "Elements", "Layout", "Fwd median (ms)", "ns / element")


@dataclass(frozen=True)
class Point:
    """One measured configuration of a fuzzed sweep: its operator, largest tensor's shape and element
    count, whether that tensor is a strided view, and the forward median (seconds)."""

    op: str
    shape: tuple[int, ...]
    elements: int
    strided: bool
    median_s: float

    @property
    def ns_per_element(self) -> float | None:
        return self.median_s * 1e9 / self.elements if self.elements else None


def sensitivity_points(records: Sequence[Record]) -> list[Point]:
    """One point per measured configuration, grouped by operator and sorted by element count."""
    by_op: dict[str, list[Point]] = defaultdict(list)
    for record in records:
        if record.status != "ok" or record.forward is None or not record.tensors:
            continue
        largest = max(record.tensors, key=lambda tensor: tensor.elements)
        point = Point(record.op, largest.shape, largest.elements, largest.strided, record.forward.median)
        by_op[point.op].append(point)
    return [point for op in sorted(by_op) for point in sorted(by_op[op], key=lambda p: p.elements)]


def sensitivity_rows(records: Sequence[Record]) -> list[list[str]]:
    """One row of text per measured configuration, grouped by operator and sorted by element count."""
    return [
        [
            p.op,
            "x".join(map(str, p.shape)) or "scalar",
            str(p.elements),
            "strided" if p.strided else "contiguous",
            f"{p.median_s * 1e3:.4f}",
            f"{p.ns_per_element:.3g}" if p.ns_per_element is not None else "—",
        ]
        for p in sensitivity_points(records)
    ]


def render_sensitivity(environment: Mapping[str, Any], records: Sequence[Record]) -> list[str]:
    """Markdown lines of the view; none unless the sweep drew its shapes (``--shapes`` fuzz or skewed)."""
    mode = environment.get("shapes", "standard")
    if mode == "standard":
        return []
    rows = sensitivity_rows(records)
    if not rows:
        return []
    return [
        f"## Shape sensitivity ({mode} shapes, checksum {str(environment.get('shapes_checksum'))[:12]})",
        "",
        markdown_table(rows, headers=HEADERS, disable_numparse=True),
        "",
    ]
