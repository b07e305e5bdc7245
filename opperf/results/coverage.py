"""Coverage: every operator of a sweep in exactly one state, counted in total and per category, and
the table ``--coverage`` prints (per category, what ran, what was skipped or failed, and why)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from opperf.measure.stages import EAGER, IN_PLACE
from opperf.results.measurement import SEVERITY, Measurement, Status
from opperf.utils.markdown_table import markdown_table
from opperf.utils.words import counted

STATUS_KEYS = tuple(s.value for s in Status)


@dataclass(frozen=True)
class OperatorState:
    """One distinct operator's state: its status, why when not ok, and the aliases measured with it."""

    op: str
    category: str
    status: Status
    reason: str | None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Coverage:
    """Distinct operators by status, in total and per category, of ``registered`` registered names."""

    registered: int
    operators: tuple[OperatorState, ...]

    @classmethod
    def of(
        cls,
        measurements: Iterable[Measurement],
        registered: int,
        aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> Coverage:
        """Each operator's worst status over its configurations (``SEVERITY``) with that status's
        reason; a stage or form it cannot take counts only where nothing else of it ran."""
        worst: dict[tuple[str, str], Status] = {}
        reasons: dict[tuple[str, str], str | None] = {}  # the first reason given with the worst status
        for m in _counted(list(measurements)):
            key = (m.spec.category, m.spec.op)
            if key not in worst or SEVERITY[m.status] > SEVERITY[worst[key]]:
                worst[key], reasons[key] = m.status, m.reason
            elif m.status is worst[key] and not reasons[key]:
                reasons[key] = m.reason
        states = tuple(
            OperatorState(
                op=op,
                category=category,
                status=status,
                reason=reasons[category, op] if status is not Status.OK else None,
                aliases=tuple((aliases or {}).get(op, ())),
            )
            for (category, op), status in sorted(worst.items(), key=lambda item: item[0][1])
        )
        return cls(registered=registered, operators=states)

    def counts(self, category: str | None = None) -> Counter[str]:
        """Operators per status, of one category or of all."""
        return Counter(s.status.value for s in self.operators if category in (None, s.category))

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(sorted({s.category for s in self.operators}))

    def to_json(self) -> dict[str, object]:
        total = self.counts()
        return {
            "registered": self.registered,
            "operators": len(self.operators),
            **{key: total.get(key, 0) for key in STATUS_KEYS},
            "by_category": {
                category: {
                    "operators": sum(self.counts(category).values()),
                    **{key: self.counts(category).get(key, 0) for key in STATUS_KEYS},
                }
                for category in self.categories
            },
            "by_operator": [
                {
                    "op": s.op,
                    "category": s.category,
                    "status": s.status.value,
                    "reason": s.reason,
                    "aliases": list(s.aliases),
                }
                for s in self.operators
            ],
        }

    def summary(self) -> str:
        """``N operators: a ok, b skipped, ...``: the one line a sweep ends with."""
        counts = self.counts()
        return f"{counted(len(self.operators), 'operator')}: " + ", ".join(
            f"{counts.get(key, 0)} {'timed out' if key == 'timeout' else key}" for key in STATUS_KEYS
        )


def render_coverage(coverage: Coverage) -> str:
    """The per-category table, then every operator that did not run, with its reason."""
    rows = [
        [
            category,
            sum(coverage.counts(category).values()),
            *(coverage.counts(category).get(k, 0) for k in STATUS_KEYS),
        ]
        for category in coverage.categories
    ]
    total = coverage.counts()
    rows.append(["total", len(coverage.operators), *(total.get(key, 0) for key in STATUS_KEYS)])
    lines = [
        f"{len(coverage.operators)} distinct operators of {coverage.registered} registered names",
        markdown_table(rows, headers=("category", "operators", *STATUS_KEYS)),
    ]
    for status in list(Status)[1:]:
        entries = [s for s in coverage.operators if s.status is status]
        if entries:
            lines += ["", f"{status.value} ({len(entries)}):"]
            lines += [f"  {s.op}: {s.reason}" for s in entries]
    return "\n".join(lines)


def _stage_skip(m: Measurement) -> bool:
    return m.status is Status.SKIPPED and (m.spec.stage != EAGER or m.spec.variant == IN_PLACE)


def _counted(measurements: list[Measurement]) -> list[Measurement]:
    """The records that decide operators' states: every one but stage and in-place skips, which
    decide only an operator with no other record (one measured in a single stage it cannot take)."""
    counted = [m for m in measurements if not _stage_skip(m)]
    present = {(m.spec.category, m.spec.op) for m in counted}
    return counted + [m for m in measurements if (m.spec.category, m.spec.op) not in present]
