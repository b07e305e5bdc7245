"""Stage speedups per DLOP-Bench tag: which syntax features a graph capture or a compiler gains on, and
which defeat it (LongTail-Bench's question), from a results document's records; no framework import.

A configuration's speedup in a stage is its eager forward median over the stage's, both from the same
results file (the row key less the stage); a tag's figure is the geometric mean over the long-tail
configurations of operators carrying it. Stages that were skipped or failed are counted beside it, so
a tag whose operators the compiler could not take is not read as "no gain". Only records timed by the
Python timer count: the native profiler times the operators an eager call dispatches but not the
Python between them, which is what a long-tail operator spends and a compiled region's time includes,
so its stage ratios would not compare like with like.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from opperf.measure.stages import EAGER, STAGES
from opperf.operators import longtail
from opperf.results.key import Key
from opperf.results.record import Record
from opperf.utils.markdown_table import markdown_table

STAGED = tuple(stage for stage in STAGES if stage != EAGER)
TIMER = "python"
NATIVE_NOTE = (
    "Stage speedups need `--profiler python`: the native profiler times the operators an eager call "
    "dispatches but not the Python between them, while a graph or compiled region is timed whole."
)


@dataclass(frozen=True)
class TagStage:
    """One tag in one stage: the geometric-mean speedup over its measured configurations (None when
    none was measured), how many were measured, and how many the stage skipped or failed."""

    tag: str
    stage: str
    speedup: float | None
    measured: int
    not_measured: int


def _unstaged(record: Record) -> Key:
    """The record's row key less its stage: what its eager record shares."""
    return record.key.replacing(stage=None)


def tag_speedups(records: Sequence[Record]) -> list[TagStage]:
    """Per tag and non-eager stage present in ``records``, the geometric-mean speedup over eager."""
    chosen = [r for r in _long_tail(records) if r.profiler == TIMER]
    eager = {_unstaged(r): r.forward_median for r in chosen if r.stage == EAGER}
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    missing: dict[tuple[str, str], int] = defaultdict(int)
    stages_present = {r.stage for r in chosen} & set(STAGED)
    for record in chosen:
        if record.stage == EAGER:
            continue
        entry = longtail.by_name().get(record.op)
        base, staged = eager.get(_unstaged(record)), record.forward_median
        for tag in entry.tags if entry else ():
            if base and staged:
                ratios[tag, record.stage].append(base / staged)
            else:
                missing[tag, record.stage] += 1
    figures = []
    for tag in longtail.TAGS:
        for stage in sorted(stages_present, key=STAGED.index):
            found, skipped = ratios[tag, stage], missing[tag, stage]
            if found or skipped:
                figures.append(TagStage(tag, stage, _geometric_mean(found), len(found), skipped))
    return figures


def _long_tail(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.category == longtail.CATEGORY]


def has_staged_long_tail(records: Sequence[Record]) -> bool:
    """Whether any long-tail record ran in a stage other than eager."""
    return any(r.stage != EAGER for r in _long_tail(records))


def _geometric_mean(values: Sequence[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def render_tag_speedups(records: Sequence[Record]) -> str:
    """The per-tag table as Markdown; a note when the stages were timed by the native profiler; "" when
    the records have no long-tail graph or compile stage."""
    figures = tag_speedups(records)
    if not figures:
        return NATIVE_NOTE if has_staged_long_tail(records) else ""
    rows = [
        [
            f.tag,
            f.stage,
            f"{f.speedup:.2f}x" if f.speedup is not None else "—",
            f.measured,
            f.not_measured,
            ", ".join(longtail.members(f.tag)),
        ]
        for f in figures
    ]
    headers = (
        "Tag",
        "Stage",
        "Speedup over eager (geo-mean)",
        "Configurations",
        "Skipped or failed",
        "Operators",
    )
    return markdown_table(rows, headers=headers, disable_numparse=True)
