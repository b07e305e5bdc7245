"""Fused patterns in a report: for each pattern and input configuration, the unfused chain's median,
the sum of its parts, and each other variant's median, speedup over the unfused chain, whether fusion
happened (read from the variant's optimised graph, recorded as ``stage_check.graph_ops`` and
``fused``), its largest difference from the unfused output, and its backward pass or why there is none.

A variant that fused nothing shows "graph unchanged" and no time; one whose outputs differ shows
"wrong output" and its difference. Speedups count Python-timer records only, as stage speedups do
(``opperf.report.stages``): the native profiler does not time a compiled region whole. No framework
import.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, cast

from opperf.operators.fused import CATEGORY, GRAPH_UNCHANGED
from opperf.report.stages import NATIVE_NOTE, TIMER
from opperf.utils.markdown_table import markdown_table

MS = 1e3
HEADERS = (
    "Pattern",
    "Framework",
    "Inputs",
    "Unfused (ms)",
    "Sum of parts (ms)",
    "Variant",
    "Median (ms)",
    "Speedup",
    "Fused",
    "Graph",
    "Max diff",
    "Backward",
)
_IDENTITY = ("framework", "op", "dtype", "device", "profiler", "mode", "threads", "cache", "run_backward")
_BASE = ("eager", "unfused")
_PARTS = ("eager", "parts")


def _identity(record: Mapping[str, Any]) -> str:
    keyed = {name: record.get(name) for name in _IDENTITY}
    return json.dumps([keyed, record.get("inputs")], sort_keys=True)


def _variant(record: Mapping[str, Any]) -> tuple[str, str]:
    return str(record.get("stage") or "eager"), str(record.get("variant") or "unfused")


def _median(record: Mapping[str, Any] | None) -> float | None:
    block = record.get("forward") if record else None
    return block["median_s"] if record and record.get("status") == "ok" and block else None


def _ms(seconds: float | None) -> str:
    return f"{seconds * MS:.3f}" if seconds is not None else "—"


def _shapes(inputs: Mapping[str, Any]) -> str:
    shown = []
    for name, value in inputs.items():
        if isinstance(value, dict) and "shape" in value:
            shown.append(f"{name}={'x'.join(map(str, value['shape']))}")
        else:
            shown.append(f"{name}={value}")
    return ", ".join(shown)


def _unchanged(record: Mapping[str, Any]) -> bool:
    return record.get("status") == "skipped" and str(record.get("reason") or "").startswith(GRAPH_UNCHANGED)


def _wrong(record: Mapping[str, Any]) -> bool:
    check = record.get("stage_check")
    return bool(check) and not cast(dict, check).get("agrees", True)


def _fusion(record: Mapping[str, Any]) -> tuple[str, str, str]:
    """(fused, graph, max diff) columns: the proof as the record states it."""
    if _unchanged(record):
        return f"no ({GRAPH_UNCHANGED})", "—", "—"
    check = record.get("stage_check") or {}
    fused = cast("dict[object, str]", {True: "yes", False: "no"}).get(check.get("fused"), "—")
    graph = " + ".join(check.get("graph_ops") or ()) or "—"
    difference = check.get("max_abs_diff")
    shown = f"{difference:.2g}" if isinstance(difference, (int, float)) else "—"
    return fused, graph, f"wrong output: {shown}" if _wrong(record) else shown


def _backward(record: Mapping[str, Any]) -> str:
    """The backward median, or the first clause of why there is none."""
    block = record.get("backward")
    if record.get("status") == "ok" and block:
        return f"{block['median_s'] * MS:.3f} ms"
    return str(record.get("backward_reason") or "—").split(":")[0]


def fused_rows(results: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row per pattern configuration and variant other than the unfused eager chain (and its
    parts, which are a column): measured, left unfused ("graph unchanged"), or computing otherwise."""
    chosen = [r for r in results if r.get("category") == CATEGORY]
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in chosen:
        groups[_identity(record)].append(record)
    rows = []
    for records in groups.values():
        by_variant = {_variant(r): r for r in records}
        base, parts = _median(by_variant.get(_BASE)), _median(by_variant.get(_PARTS))
        timed = records[0].get("profiler") == TIMER
        for record in records:
            if _variant(record) in (_BASE, _PARTS):
                continue
            if record.get("status") != "ok" and not (_unchanged(record) or _wrong(record)):
                continue  # skipped or failed for another reason: listed under "Not benchmarked"
            median = _median(record)
            speedup = f"{base / median:.2f}x" if timed and base and median else "—"
            rows.append(
                [
                    str(record["op"]),
                    str(record["framework"]),
                    _shapes(record.get("inputs") or {}),
                    _ms(base),
                    _ms(parts),
                    "/".join(_variant(record)),
                    _ms(median) if record.get("status") == "ok" else str(record.get("status")),
                    speedup,
                    *_fusion(record),
                    _backward(record),
                ]
            )
    return rows


def render_fused(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The report's fused-patterns section as Markdown lines (none without fused patterns)."""
    rows = fused_rows(results)
    if not rows:
        return []
    lines = [
        "## Fused patterns",
        "",
        "Speedup: the unfused eager chain's forward median over the variant's (above 1 is faster). "
        "Fused: whether the variant's optimised graph (Graph) runs fewer nodes than the unfused chain; "
        "a fusion backend that fused nothing is skipped, never timed as fused. Max diff: against the "
        "unfused output (rtol = atol = 1e-4). Variants skipped for other reasons are under Not benchmarked.",
        "",
        markdown_table(rows, headers=HEADERS, disable_numparse=True),
        "",
    ]
    if any(r.get("category") == CATEGORY and r.get("profiler") != TIMER for r in results):
        lines += [NATIVE_NOTE, ""]
    return lines
