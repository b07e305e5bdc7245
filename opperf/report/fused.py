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

from collections import defaultdict
from collections.abc import Sequence

from opperf.operators.fused import CATEGORY, GRAPH_UNCHANGED
from opperf.report.stages import NATIVE_NOTE, TIMER
from opperf.results.key import Key
from opperf.results.record import Record
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
_BASE = ("eager", "unfused")
_PARTS = ("eager", "parts")


def _pattern(record: Record) -> Key:
    """The record's row key less its stage and variant: what every variant of its pattern shares."""
    return record.key.replacing(stage=None, variant=None)


def _variant(record: Record) -> tuple[str, str]:
    return record.stage, record.variant or "unfused"


def _median(record: Record | None) -> float | None:
    return record.forward_median if record else None


def _ms(seconds: float | None) -> str:
    return f"{seconds * MS:.3f}" if seconds is not None else "—"


def _unchanged(record: Record) -> bool:
    return record.status == "skipped" and (record.reason or "").startswith(GRAPH_UNCHANGED)


def _wrong(record: Record) -> bool:
    return record.stage_agrees is False


def _fusion(record: Record) -> tuple[str, str, str]:
    """(fused, graph, max diff) columns: the proof as the record states it."""
    if _unchanged(record):
        return f"no ({GRAPH_UNCHANGED})", "—", "—"
    check = record.stage_check
    if check is None:
        return "—", "—", "—"
    fused = "—" if check.fused is None else "yes" if check.fused else "no"
    graph = " + ".join(check.graph_ops or ()) or "—"
    shown = f"{check.max_abs_diff:.2g}" if isinstance(check.max_abs_diff, (int, float)) else "—"
    return fused, graph, f"wrong output: {shown}" if _wrong(record) else shown


def _backward(record: Record) -> str:
    """The backward median, or the first clause of why there is none."""
    if record.status == "ok" and record.backward:
        return f"{record.backward.median * MS:.3f} ms"
    return (record.backward_reason or "—").split(":")[0]


def fused_rows(records: Sequence[Record]) -> list[list[str]]:
    """One row per pattern configuration and variant other than the unfused eager chain (and its
    parts, which are a column): measured, left unfused ("graph unchanged"), or computing otherwise."""
    groups: dict[Key, list[Record]] = defaultdict(list)
    for record in records:
        if record.category == CATEGORY:
            groups[_pattern(record)].append(record)
    rows = []
    for members in groups.values():
        by_variant = {_variant(r): r for r in members}
        base, parts = _median(by_variant.get(_BASE)), _median(by_variant.get(_PARTS))
        timed = members[0].profiler == TIMER
        for record in members:
            if _variant(record) in (_BASE, _PARTS):
                continue
            if record.status != "ok" and not (_unchanged(record) or _wrong(record)):
                continue  # skipped or failed for another reason: listed under "Not benchmarked"
            median = record.forward_median
            speedup = f"{base / median:.2f}x" if timed and base and median else "—"
            rows.append(
                [
                    record.op,
                    record.framework,
                    record.inputs,
                    _ms(base),
                    _ms(parts),
                    "/".join(_variant(record)),
                    _ms(median) if record.status == "ok" else record.status,
                    speedup,
                    *_fusion(record),
                    _backward(record),
                ]
            )
    return rows


def render_fused(records: Sequence[Record]) -> list[str]:
    """The report's fused-patterns section as Markdown lines (none without fused patterns)."""
    rows = fused_rows(records)
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
    if any(r.category == CATEGORY and r.profiler != TIMER for r in records):
        lines += [NATIVE_NOTE, ""]
    return lines
