"""Diff files (``opperf diff --output-format json``) as typed rows for the presentation writers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opperf.report.markdown import _inputs as describe_inputs

DIFF_FORMAT_KEY = "diff_format_version"


@dataclass(frozen=True)
class DiffRow:
    """One row of a diff: its configuration, verdict, both sides' medians (seconds), the ratio new
    over base with its 95% interval, q, the reason, and the doubt flags either side carried."""

    framework: str
    namespace: str
    op: str
    inputs: str
    phase: str
    verdict: str
    base_median: float | None
    new_median: float | None
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    q: float | None
    reason: str | None
    flags: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.namespace}.{self.op}({self.inputs}) {self.phase}"


def _side_flags(side: Mapping[str, object] | None) -> set[str]:
    names = {"noisy": "noisy", "imprecise": "imprecise", "busy": "busy_machine"}
    return {flag for field, flag in names.items() if side and side.get(field)}


def diff_row(row: Mapping[str, object]) -> DiffRow:
    base, new = row.get("base"), row.get("new")
    interval = row.get("ratio_ci95") or (None, None)
    return DiffRow(
        framework=str(row.get("framework", "")),
        namespace=str(row["namespace"]),
        op=str(row["op"]),
        inputs=describe_inputs(row.get("inputs") or {}),
        phase=str(row.get("phase", "forward")),
        verdict=str(row["verdict"]),
        base_median=(base or {}).get("median_s"),
        new_median=(new or {}).get("median_s"),
        ratio=row.get("ratio"),
        ratio_low=interval[0],
        ratio_high=interval[1],
        q=row.get("q"),
        reason=row.get("reason"),
        flags=tuple(sorted(_side_flags(base) | _side_flags(new))),
    )


@dataclass(frozen=True)
class DiffFile:
    """One diff file: its path, its summary block (counts, geomean, threshold) and rows."""

    path: str
    summary: Mapping[str, object]
    rows: tuple[DiffRow, ...]

    @property
    def threshold(self) -> float:
        return float(self.summary.get("threshold") or 0.05)


def diff_file(document: Mapping[str, object], path: str) -> DiffFile:
    return DiffFile(
        path, document.get("summary") or {}, tuple(diff_row(r) for r in document.get("rows") or ())
    )
