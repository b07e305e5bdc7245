"""The thread-scaling view of a sweep with threads as a factor (``--threads 1,2`` or auto).

Per configuration (a row key less its thread count): the forward median per count, and for each count
above the fewest its speedup over the fewest and its efficiency (speedup per added thread). On a small
shared machine most of a poor or a spectacular scaling figure is contention, so the numbers carry flags
rather than interpretation: ``busy_machine`` (another process used more than a quarter of a core
while either count was measured; its figures read "n/a (busy)"), ``oversubscribed`` (more threads than
usable CPUs) and ``superlinear`` (efficiency above 1 by more than ``SUPERLINEAR_MARGIN``: caches or
contention, not threads).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opperf.results.key import Key
from opperf.results.record import Record
from opperf.utils.markdown_table import markdown_table

SUPERLINEAR_MARGIN = 0.1
BUSY = "n/a (busy)"


@dataclass(frozen=True)
class CountFigure:
    """One thread count's forward median (seconds) for a configuration, and whether it was contended."""

    threads: int
    median_s: float
    busy: bool


@dataclass(frozen=True)
class Scaling:
    """A configuration's figures across thread counts, fewest first, and the flags they earn."""

    key: Key
    inputs: str
    figures: tuple[CountFigure, ...]
    usable_cpus: int | None

    @property
    def name(self) -> str:
        """The operator as users call it, then what else tells this configuration from another of the
        same inputs (a stage other than eager, a fused variant, inputs drawn otherwise)."""
        qualifiers = self.key.qualifiers()
        return self.key.name + (f" [{', '.join(qualifiers)}]" if qualifiers else "")

    def speedup(self, figure: CountFigure) -> float | None:
        """The fewest count's median over ``figure``'s; None where either was measured on a busy machine."""
        base = self.figures[0]
        if base.busy or figure.busy or figure.median_s <= 0:
            return None
        return base.median_s / figure.median_s

    def efficiency(self, figure: CountFigure) -> float | None:
        speedup = self.speedup(figure)
        return None if speedup is None else speedup * self.figures[0].threads / figure.threads

    @property
    def flags(self) -> list[str]:
        found = []
        if self.usable_cpus and any(f.threads > self.usable_cpus for f in self.figures):
            found.append("oversubscribed")
        if any(f.busy for f in self.figures):
            found.append("busy_machine")
        efficiencies = [self.efficiency(f) for f in self.figures[1:]]
        if any(e is not None and e > 1 + SUPERLINEAR_MARGIN for e in efficiencies):
            found.append("superlinear")
        return found


def scalings(records: Sequence[Record], usable_cpus: int | None) -> list[Scaling]:
    """The configurations measured ok at two or more thread counts, in the order they first appear."""
    groups: dict[Key, list[tuple[CountFigure, str]]] = defaultdict(list)
    for record in records:
        if record.status != "ok" or record.forward is None or not isinstance(record.threads, int):
            continue
        figure = CountFigure(record.threads, record.forward.median, record.busy)
        groups[record.key.replacing(threads=None)].append((figure, record.inputs))
    found = []
    for key, members in groups.items():
        figures = tuple(sorted((f for f, _ in members), key=lambda f: f.threads))
        if len({f.threads for f in figures}) >= 2:
            found.append(Scaling(key, members[0][1], figures, usable_cpus))
    return found


def _cell(value: float | None, digits: str) -> str:
    return BUSY if value is None else format(value, digits)


def render_scaling(environment: Mapping[str, Any], records: Sequence[Record]) -> list[str]:
    """Markdown lines of the scaling table; none unless some configuration ran at several counts."""
    found = scalings(records, environment.get("usable_cpus"))
    if not found:
        return []
    counts = sorted({f.threads for s in found for f in s.figures})
    headers = ["Operator", "Inputs", *(f"{c} thr (ms)" for c in counts)]
    headers += [h for c in counts[1:] for h in (f"speedup {c}", f"efficiency {c}")]
    rows = []
    for scaling in found:
        by_count = {f.threads: f for f in scaling.figures}
        row = [scaling.name, scaling.inputs]
        for count in counts:
            figure = by_count.get(count)
            row.append("—" if figure is None else BUSY if figure.busy else f"{figure.median_s * 1e3:.4f}")
        for count in counts[1:]:
            figure = by_count.get(count)
            if figure is None or count == scaling.figures[0].threads:
                row += ["—", "—"]
            else:
                row += [_cell(scaling.speedup(figure), ".2f"), _cell(scaling.efficiency(figure), ".2f")]
        rows.append([*row, ", ".join(scaling.flags)])
    return [
        "## Thread scaling",
        "",
        f"Speedup and efficiency are against the fewest threads; usable CPUs: "
        f"{environment.get('usable_cpus', '?')}.",
        "",
        markdown_table(rows, headers=[*headers, "Flags"], disable_numparse=True),
        "",
    ]
