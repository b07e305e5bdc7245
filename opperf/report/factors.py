"""Views of a setting of the row key that records were measured at several values of: how a
configuration's time changes with its input values (``--values``), its memory layout (``--layout``),
or its in-place form (``--in-place``, the variant ``in-place``), each against the setting's default.

A configuration (a row key less the setting) with records at two values or more, from one file (an
A/B job whose side set the option otherwise) or several (sweeps that differ in it), is one row per
phase: its median at each value and each value's ratio to the default's, flagged ``busy_machine``
where another process used more than a quarter of a core while either was measured.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opperf.measure.stages import IN_PLACE
from opperf.results.draws import CONTIGUOUS, UNIFORM_POSITIVE
from opperf.results.key import Key
from opperf.results.record import PHASES, Record


@dataclass(frozen=True)
class Factor:
    """A setting of the row key a view tables against its ``default``; ``only`` limits the other
    values it shows (the in-place variant, not a fused pattern's)."""

    setting: str
    title: str
    default: object
    only: frozenset[object] | None = None

    def shown(self, value: object) -> str:
        """A value as a table names it (no variant is the out-of-place call)."""
        return str(value) if value != "" else "out-of-place"


FACTORS = (
    Factor("values", "Input values", UNIFORM_POSITIVE),
    Factor("layout", "Memory layouts", CONTIGUOUS),
    Factor("variant", "In-place forms", "", frozenset({IN_PLACE})),
)


@dataclass(frozen=True)
class FactorRow:
    """One configuration's phase at several values of a factor: the median (seconds) at each, and
    whether another process was busy while any was measured."""

    key: Key
    inputs: str
    phase: str
    medians: Mapping[object, float]
    busy: bool

    def ratio(self, value: object, default: object) -> float | None:
        """``value``'s median over the default's; None where either is missing."""
        base, other = self.medians.get(default), self.medians.get(value)
        return other / base if base and other is not None else None


def factor_rows(records: Sequence[Record], factor: Factor) -> list[FactorRow]:
    """The configurations measured ok at the factor's default and at another of its values, in the
    order they first appear; a value's median is the median of its records' (several runs)."""
    grouped: dict[Key, dict[object, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if record.status != "ok":
            continue
        value = getattr(record.key, factor.setting)
        if value != factor.default and factor.only is not None and value not in factor.only:
            continue
        grouped[record.key.replacing(**{factor.setting: None})][value].append(record)
    rows = []
    for key, by_value in grouped.items():
        if factor.default not in by_value or len(by_value) < 2:
            continue
        first = by_value[factor.default][0]
        busy = any(record.busy for found in by_value.values() for record in found)
        for phase in PHASES:
            medians = {
                value: statistics.median(r.phases[phase].median for r in found)
                for value, found in by_value.items()
                if all(phase in r.phases for r in found)
            }
            if factor.default in medians and len(medians) >= 2:
                rows.append(FactorRow(key, first.inputs, phase, medians, busy))
    return rows


def values_of(rows: Sequence[FactorRow], factor: Factor) -> list[object]:
    """The factor's values the rows hold, the default first, then in the order first seen."""
    seen = [factor.default]
    for row in rows:
        seen += [value for value in row.medians if value not in seen]
    return seen
