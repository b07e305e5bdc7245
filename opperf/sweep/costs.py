"""What each operator cost a previous sweep (``sweep --costs PREVIOUS.json``, ``plan --costs``): the
shards of the next one are balanced by it rather than by counting input configurations.

An operator's cost is the seconds the sweep spent on its records (``elapsed_s``: inputs prepared,
sampled, a crashed worker waited for and replaced), plus each record's share of what the sweep spent
besides (starting, probing, writing the journal: its ``wall_seconds`` less all records' time, over
its records). A file written before records carried ``elapsed_s`` counts their sampling and compiling
seconds instead. An operator the previous sweep did not run costs its number of input configurations
times the median seconds a configuration took there. The file is data: it chooses no operator, only
how the selected ones are split.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from opperf.results.document import is_ab, read_document
from opperf.utils.errors import OpperfError


@dataclass(frozen=True)
class MeasuredCosts:
    """Seconds per operator in a previous sweep, and the median seconds of one of its configurations."""

    source: str
    by_operator: Mapping[str, float]
    per_configuration_s: float

    def of(self, op: str, configurations: float) -> float:
        """``op``'s expected seconds: measured, else ``configurations`` at the median's cost."""
        measured = self.by_operator.get(op)
        return measured if measured is not None else configurations * self.per_configuration_s


def read_costs(path: str, framework: str) -> MeasuredCosts:
    """The costs a results file of ``framework`` records; OpperfError naming the file otherwise."""
    fix = "pass the results file of a previous sweep"
    document = cast("dict[str, Any]", read_document(path, fix))
    if is_ab(document):
        raise OpperfError(f"--costs {path}: an A/B file (opperf ab); {fix}")
    environment = cast("dict[str, Any]", document.get("environment") or {})
    if environment.get("framework") not in (None, framework):
        raise OpperfError(
            f"--costs {path}: a sweep of {environment.get('framework')}, not {framework}; pass a results "
            f"file of a {framework} sweep"
        )
    records = [r for r in document.get("results") or [] if isinstance(r, dict)]
    if not records:
        raise OpperfError(f"--costs {path}: it holds no records; {fix}")
    spent = [_spent(record) for record in records]
    wall = environment.get("wall_seconds")
    besides = max(0.0, float(wall) - sum(spent)) / len(records) if isinstance(wall, (int, float)) else 0.0
    if not sum(spent) + besides > 0:  # every cost 0: every operator would go to the first shard
        raise OpperfError(
            f"--costs {path}: it records no time spent (every elapsed_s and its wall_seconds are 0); "
            f"{fix}, or leave --costs out to balance by configuration counts"
        )
    by_operator: dict[str, float] = defaultdict(float)
    per_configuration: dict[tuple[str, str], float] = defaultdict(float)
    for record, seconds in zip(records, spent, strict=True):
        by_operator[str(record["op"])] += seconds + besides
        per_configuration[str(record["op"]), repr(record.get("inputs"))] += seconds + besides
    return MeasuredCosts(path, dict(by_operator), statistics.median(per_configuration.values()))


def _spent(record: Mapping[str, Any]) -> float:
    """The seconds the sweep spent on ``record``: its ``elapsed_s``, else what it sampled and compiled."""
    elapsed = record.get("elapsed_s")
    if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool) and elapsed >= 0:
        return float(elapsed)
    sampling = record.get("sampling")
    sampling = sampling if isinstance(sampling, dict) else {}
    seconds = [sampling.get("seconds"), record.get("compile_s")]
    return sum(float(value) for value in seconds if isinstance(value, (int, float)) and value > 0)
