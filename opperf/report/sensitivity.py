"""The shape-sensitivity view of a fuzzed sweep: per operator, time per element against element count.

A sweep run with ``--shapes fuzz`` or ``skewed`` measures each operator on drawn shapes from
latency-bound to bandwidth-bound sizes; sorted by element count, the time per element shows where the
fixed cost of a call stops dominating and whether the operator keeps its per-element speed once its
data leaves the caches (or on a skewed, singleton or strided layout).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from tabulate import tabulate

HEADERS = ("Operator", "Largest tensor", "Elements", "Layout", "Fwd median (ms)", "ns / element")


def _tensors(inputs: Mapping[str, object]) -> list[Mapping[str, object]]:
    found: list[Mapping[str, object]] = []
    for value in inputs.values():
        if isinstance(value, dict) and "shape" in value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, dict) and "shape" in v)
    return found


def _largest(inputs: Mapping[str, object]) -> Mapping[str, object] | None:
    tensors = _tensors(inputs)
    return max(tensors, key=lambda t: math.prod(t["shape"])) if tensors else None


def sensitivity_rows(results: Sequence[Mapping[str, object]]) -> list[list[str]]:
    """One row per measured configuration, grouped by operator and sorted by element count."""
    by_op: dict[str, list[tuple[int, list[str]]]] = defaultdict(list)
    for result in results:
        forward = result.get("forward")
        largest = _largest(result["inputs"])
        if result["status"] != "ok" or not forward or largest is None:
            continue
        elements = math.prod(largest["shape"])
        median = forward["median_s"]
        layout = "strided" if largest.get("storage") == "sliced" else "contiguous"
        per_element = f"{median * 1e9 / elements:.3g}" if elements else "—"
        row = [
            str(result["op"]),
            "x".join(map(str, largest["shape"])) or "scalar",
            str(elements),
            layout,
            f"{median * 1e3:.4f}",
            per_element,
        ]
        by_op[str(result["op"])].append((elements, row))
    return [row for op in sorted(by_op) for _, row in sorted(by_op[op], key=lambda item: item[0])]


def render_sensitivity(document: Mapping[str, object]) -> list[str]:
    """Markdown lines of the view; none unless the sweep drew its shapes (``--shapes`` fuzz or skewed)."""
    environment = document["environment"]
    mode = environment.get("shapes", "standard")
    if mode == "standard":
        return []
    rows = sensitivity_rows(document["results"])
    if not rows:
        return []
    return [
        f"## Shape sensitivity ({mode} shapes, checksum {str(environment.get('shapes_checksum'))[:12]})",
        "",
        tabulate(rows, headers=HEADERS, tablefmt="github", disable_numparse=True),
        "",
    ]
