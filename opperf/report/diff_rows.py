"""Diff files (``opperf diff --output-format json``) as typed rows for the presentation writers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opperf.results.inputs import describe_inputs
from opperf.results.key import qualified
from opperf.utils.errors import OpperfError
from opperf.verdicts.decide import DEFAULT_THRESHOLD
from opperf.verdicts.diff import INDICATIVE_NOTE
from opperf.verdicts.document import DIFF_FORMAT_VERSION

DIFF_FORMAT_KEY = "diff_format_version"
"""What marks a diff file (``opperf diff --output-format json``), and holds its format version."""


@dataclass(frozen=True)
class DiffRow:
    """One row of a diff: its configuration, verdict, both sides' figures the ratio compares (seconds:
    an A/B job's rounds' fastest passes, else the medians), the ratio new over base with its 95%
    interval, q, the reason, and the doubt flags either side carried."""

    framework: str
    namespace: str
    op: str
    inputs: str
    phase: str
    verdict: str
    base_s: float | None
    new_s: float | None
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    q: float | None
    reason: str | None
    flags: tuple[str, ...]
    indicative: bool = False
    """Whether the verdict rests on one run a side (``opperf diff`` marks such a row indicative)."""

    @property
    def name(self) -> str:
        """How users call the operator (``opperf.results.key.qualified``)."""
        return qualified(self.namespace, self.op)

    @property
    def label(self) -> str:
        return f"{self.name}({self.inputs}) {self.phase}"


def _side_flags(side: Mapping[str, Any] | None) -> set[str]:
    names = {"noisy": "noisy", "imprecise": "imprecise", "busy": "busy_machine"}
    return {flag for field, flag in names.items() if side and side.get(field)}


def _compared(side: Mapping[str, Any] | None) -> float | None:
    """The figure of a side the row's ratio compares (``compared_s``; the median in a diff file
    written before it was recorded)."""
    if not side:
        return None
    return side.get("compared_s", side.get("median_s"))


def diff_row(row: Mapping[str, Any]) -> DiffRow:
    base, new = row.get("base"), row.get("new")
    interval = row.get("ratio_ci95") or (None, None)
    return DiffRow(
        framework=str(row.get("framework", "")),
        namespace=str(row["namespace"]),
        op=str(row["op"]),
        inputs=describe_inputs(row.get("inputs") or {}),
        phase=str(row.get("phase", "forward")),
        verdict=str(row["verdict"]),
        base_s=_compared(base),
        new_s=_compared(new),
        ratio=row.get("ratio"),
        ratio_low=interval[0],
        ratio_high=interval[1],
        q=row.get("q"),
        reason=row.get("reason"),
        flags=tuple(sorted(_side_flags(base) | _side_flags(new))),
        indicative=row.get("indicative") is True,
    )


@dataclass(frozen=True)
class DiffFile:
    """One diff file: its path, its summary block (counts, geomean, threshold) and rows."""

    path: str
    summary: Mapping[str, Any]
    rows: tuple[DiffRow, ...]

    @property
    def threshold(self) -> float:
        stated = self.summary.get("threshold")
        return DEFAULT_THRESHOLD if stated is None else float(stated)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the diff said of its verdicts beside the rows (``Summary.said``: an A/B job's
        compared-across settings, a stopped job, a machine factor beyond the threshold, one run a
        side); a diff file written before it was recorded, its notes and the one-run warning."""
        if "said" in self.summary:
            return tuple(self.summary["said"])
        indicative = (INDICATIVE_NOTE,) if self.summary.get("indicative") is True else ()
        return tuple(self.summary.get("notes") or ()) + indicative


def diff_file(document: Mapping[str, Any], path: str) -> DiffFile:
    """A diff document read as typed rows; OpperfError naming the file and row a reader cannot use."""
    version = document.get(DIFF_FORMAT_KEY)
    if version != DIFF_FORMAT_VERSION:
        raise OpperfError(
            f"{path}: a diff file of format version {version!r}, which this opperf does not read (it reads "
            f"{DIFF_FORMAT_VERSION}); {_FIX} of this version"
        )
    summary, rows = document.get("summary", {}), document.get("rows", [])
    if not isinstance(summary, dict) or not isinstance(rows, list):
        raise OpperfError(f"{path}: a diff file whose summary is no object or rows no list; {_FIX}")
    problem = _summary_problem(summary)
    if problem is not None:
        raise OpperfError(f"{path}: a diff file whose summary's {problem}; {_FIX}")
    for index, row in enumerate(rows, start=1):
        problem = _row_problem(row)
        if problem is not None:
            raise OpperfError(f"{path}: diff row {index}: {problem}; {_FIX}")
    return DiffFile(path, summary, tuple(diff_row(r) for r in rows))


_FIX = "pass diff files written by `opperf diff --output-format json`"


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _summary_problem(summary: Mapping[str, Any]) -> str | None:
    """What a reader could not use in a diff's summary (its threshold, geometric mean, counts), or None."""
    for name in ("threshold", "geomean_ratio"):
        if summary.get(name) is not None and not _number(summary[name]):
            return f"{name} is {summary[name]!r}, not a number"
    for name in ("notes", "said"):
        notes = summary.get(name)
        if notes is not None and not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
            return f"{name} is {notes!r}, not a list of text"
    counts = summary.get("counts")
    if counts is not None and not (
        isinstance(counts, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values())
    ):
        return f"counts is {counts!r}, not verdicts with their counts"
    return None


def _row_problem(row: object) -> str | None:
    """What a reader could not use in a diff row, or None."""
    if not isinstance(row, dict):
        return "not an object"
    for name in ("namespace", "op", "verdict"):
        if not isinstance(row.get(name), str):
            return f"{name} is {row.get(name)!r}; expected text"
    for name in ("framework", "phase", "reason"):
        if row.get(name) is not None and not isinstance(row[name], str):
            return f"{name} is {row[name]!r}; expected text"
    if not isinstance(row.get("inputs") or {}, dict):
        return f"inputs is {row['inputs']!r}; expected an object"
    for name in ("ratio", "q"):
        if row.get(name) is not None and not _number(row[name]):
            return f"{name} is {row[name]!r}; expected a number"
    interval = row.get("ratio_ci95")
    if interval is not None and not (
        isinstance(interval, list) and len(interval) == 2 and all(v is None or _number(v) for v in interval)
    ):
        return f"ratio_ci95 is {interval!r}; expected [low, high]"
    for side in ("base", "new"):
        block = row.get(side)
        if block is not None and not (
            isinstance(block, dict)
            and all(block.get(name) is None or _number(block[name]) for name in ("compared_s", "median_s"))
        ):
            return f"{side} is {block!r}; expected an object with compared_s and median_s in seconds"
    return None
