"""The HTML report's sections over records that other commands add, each "" without its data: a
model's time share (a model report given), stage speedups per configuration and per DLOP-Bench tag
(records at several ``stage``s), thread scaling (a configuration at several ``threads``) and shape
sensitivity (a sweep with ``--shapes fuzz`` or ``skewed``). The figures are the Markdown report's
views (``report.scaling``, ``report.sensitivity``, ``report.stages``), drawn and tabled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from opperf.measure.stages import EAGER
from opperf.operators import longtail
from opperf.report import view_charts
from opperf.report.factors import Factor, FactorRow, factor_rows, values_of
from opperf.report.inputs import ModelFile, ReportInputs
from opperf.report.page import Column, cards, data_table, escape, flag_badges, number, plot
from opperf.report.scaling import BUSY, Scaling, scalings
from opperf.report.sensitivity import Point, sensitivity_points
from opperf.report.stages import NATIVE_NOTE, TagStage, has_staged_long_tail, tag_speedups
from opperf.results.inputs import describe_inputs
from opperf.results.model_report import ConfigurationRow, OperatorRow
from opperf.results.record import Record
from opperf.results.rows import MS

PLOTTED = 40
"""Configurations a speedup plot draws at most (the extremes either way; the table lists them all)."""


def _ms(seconds: float | None) -> str:
    return number(seconds * MS if seconds is not None else None)


def _share(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.1f}%"


def models(inputs: ReportInputs) -> str:
    """Per model report: its totals, each operator's share in-model and standalone, the tables."""
    return "".join(_model(index, file) for index, file in enumerate(inputs.models))


def _model(index: int, file: ModelFile) -> str:
    report = file.report
    shape = ",".join(map(str, report.input_shape))
    totals = [
        ("ms per pass end to end (no profiler)", number(report.end_to_end_s * MS)),
        ("ms operators in-model", number(report.in_model_total_s * MS)),
        ("of the profiled pass in operators", _share(report.coverage)),
        ("ms operators standalone", number(report.standalone_total_s * MS)),
        ("operators not measured in full (left out)", ", ".join(report.not_measured) or "none"),
        ("configurations captured", len(report.configurations)),
    ]
    operator_columns: list[Column[OperatorRow]] = [
        Column("operator", lambda r: escape(r.op), lambda r: r.op),
        Column("configurations", lambda r: str(r.configurations), lambda r: r.configurations, True),
        Column("calls", lambda r: str(r.calls), lambda r: r.calls, True),
        Column("in-model ms", lambda r: _ms(r.in_model_s), lambda r: r.in_model_s, True),
        Column("share", lambda r: _share(r.in_model_share), lambda r: r.in_model_share, True),
        Column("standalone ms", lambda r: _ms(r.standalone_s), lambda r: r.standalone_s, True),
        Column("share ", lambda r: _share(r.standalone_share), lambda r: r.standalone_share, True),
        Column("standalone / in-model", lambda r: number(r.ratio, 3), lambda r: r.ratio, True),
    ]
    configuration_columns: list[Column[ConfigurationRow]] = [
        Column("operator", lambda c: escape(c.op), lambda c: c.op),
        Column("inputs", lambda c: escape(describe_inputs(dict(c.inputs)))),
        Column("calls", lambda c: str(c.calls), lambda c: c.calls, True),
        Column("median ms", lambda c: _ms(c.median_s), lambda c: c.median_s, True),
        Column("median x calls ms", lambda c: _ms(c.total_s), lambda c: c.total_s, True),
        Column("status", lambda c: escape(c.status), lambda c: c.status),
    ]
    return (
        f"<h3>{escape(report.framework)} {escape(report.model)} ({escape(shape)}, {escape(report.mode)})"
        f' <span class="muted">{escape(file.path)}</span></h3>'
        + cards(totals)
        + plot(
            view_charts.model_share(report),
            "Each operator's share of the operators' time per forward pass: in-model (the framework's "
            f"profiler, {report.profiled_by}) and standalone (each captured configuration replayed "
            "alone, median times calls). Their ratio is a finding (fusion, warm caches, layout, "
            "dispatch), not an error.",
        )
        + data_table(f"model-{index}", operator_columns, report.operators)
        + f"<details><summary>{len(report.configurations)} captured configurations</summary>"
        + data_table(f"model-configurations-{index}", configuration_columns, report.configurations)
        + "</details>"
    )


@dataclass(frozen=True)
class Staged:
    """A configuration in a non-eager stage beside its eager record (None when eager was not ok)."""

    eager: Record | None
    staged: Record

    @property
    def speedup(self) -> float | None:
        eager, staged = self.eager, self.staged
        if eager is None or not eager.forward or not staged.forward or staged.status != "ok":
            return None
        return eager.forward.median / staged.forward.median if staged.forward.median > 0 else None


def staged_rows(rows: Sequence[Record]) -> list[Staged]:
    eager: dict[tuple[object, ...], Record] = {}
    for row in rows:
        unfused = row.variant in ("", "unfused")  # a fused pattern's baseline is its unfused chain
        if row.stage == EAGER and unfused and row.status == "ok" and row.forward and row.forward.median > 0:
            eager.setdefault((row.source, *row.setting_free_key("stage")), row)
    return [
        Staged(eager.get((row.source, *row.setting_free_key("stage"))), row)
        for row in rows
        if row.stage != EAGER
    ]


def _extremes(measured: list[Staged]) -> list[Staged]:
    """All of ``measured`` when few, else the ``PLOTTED`` with the largest and smallest speedups."""
    if len(measured) <= PLOTTED:
        return measured
    ordered = sorted(measured, key=lambda s: cast(float, s.speedup))
    return ordered[: PLOTTED // 2] + ordered[-PLOTTED // 2 :]


def stages(inputs: ReportInputs) -> str:
    """Each configuration's speedup in each non-eager stage over its eager record (same file), the
    capture or compile time and whether the stage's outputs agreed with eager's."""
    found = staged_rows(inputs.rows)
    if not found:
        return ""
    measured = [s for s in found if s.speedup is not None]
    shown = _extremes(measured)
    several = len({s.staged.threads for s in found}) > 1  # threads a factor too: say which count

    def label(s: Staged) -> str:
        return f"{s.staged.label}, {s.staged.threads} thr" if several else s.staged.label

    items = [(label(s), f"{s.staged.framework} {s.staged.stage}", cast(float, s.speedup)) for s in shown]
    columns: list[Column[Staged]] = [
        Column("framework", lambda s: escape(s.staged.framework), lambda s: s.staged.framework),
        Column("function", lambda s: escape(s.staged.function), lambda s: s.staged.function),
        Column("inputs", lambda s: escape(s.staged.inputs)),
        Column("stage", lambda s: escape(s.staged.stage), lambda s: s.staged.stage),
        *(
            [Column("threads", lambda s: escape(str(s.staged.threads)), lambda s: s.staged.threads, True)]
            if several
            else []
        ),
        Column("status", lambda s: escape(s.staged.status), lambda s: s.staged.status),
        Column("eager ms", lambda s: _ms(_median(s.eager)), lambda s: _median(s.eager), True),
        Column("stage ms", lambda s: _ms(_median(s.staged)), lambda s: _median(s.staged), True),
        Column("speedup", lambda s: number(s.speedup, 3), lambda s: s.speedup, True),
        Column("compile s", lambda s: number(s.staged.compile_s, 3), lambda s: s.staged.compile_s, True),
        Column("outputs agree", lambda s: _agrees(s.staged.stage_agrees), lambda s: s.staged.stage_agrees),
        Column(
            "flags / reason",
            lambda s: flag_badges(s.staged.flags) + escape(s.staged.reason or ""),
            lambda s: " ".join(s.staged.flags) or (s.staged.reason or ""),
        ),
    ]
    native = [
        f.path
        for f in inputs.results
        if f.environment.get("profiler") == "native" and any(r.stage != EAGER for r in f.rows)
    ]
    note = f'<p class="muted">{escape(NATIVE_NOTE)}</p>' if native else ""
    not_taken = len(found) - len(measured)
    return (
        f"<p>{len(found)} configurations in a stage other than eager: {len(measured)} measured, "
        f"{not_taken} that the stage skipped or failed (their reasons are in the table).</p>"
        + note
        + plot(
            view_charts.stage_speedups(items),
            "Speedup of each configuration's forward median over its eager record in the same file; "
            f"right of the line the stage is faster. At most {PLOTTED} drawn, the extremes either way.",
        )
        + data_table("stages", columns, found, flagged=lambda s: bool(s.staged.flags))
    )


def _median(row: Record | None) -> float | None:
    return row.forward_median if row is not None else None


def _agrees(agrees: bool | None) -> str:
    return {True: "yes", False: '<span class="flag mismatch">no</span>', None: "—"}[agrees]


def tag_stages(inputs: ReportInputs) -> str:
    """Per DLOP-Bench tag, the long-tail operators' geometric-mean speedup in each stage, per framework
    (LongTail-Bench's question: which syntax features a graph capture or a compiler gains on)."""
    by_framework: dict[str, list[Record]] = {}
    for file in inputs.results:
        for record in file.rows:
            by_framework.setdefault(record.framework, []).append(record)
    series = [
        (f"{framework} {figure.stage}", figure)
        for framework, records in sorted(by_framework.items())
        for figure in tag_speedups(records)
    ]
    if not series:
        staged = any(has_staged_long_tail(records) for records in by_framework.values())
        return f"<p>{escape(NATIVE_NOTE)}</p>" if staged else ""
    columns: list[Column[tuple[str, TagStage]]] = [
        Column("tag", lambda s: escape(s[1].tag), lambda s: s[1].tag),
        Column("framework and stage", lambda s: escape(s[0]), lambda s: s[0]),
        Column("speedup (geo-mean)", lambda s: number(s[1].speedup, 3), lambda s: s[1].speedup, True),
        Column("configurations", lambda s: str(s[1].measured), lambda s: s[1].measured, True),
        Column("skipped or failed", lambda s: str(s[1].not_measured), lambda s: s[1].not_measured, True),
        Column("operators", lambda s: escape(", ".join(longtail.members(s[1].tag)))),
    ]
    return plot(
        view_charts.tag_speedups(series),
        "Geometric mean over the long-tail configurations of the operators carrying each tag of "
        "their speedup over eager (Python-timer records only), per framework and stage; the counts "
        "say how many configurations were measured and how many the stage could not take.",
    ) + data_table("tag-stages", columns, series)


def threads(inputs: ReportInputs) -> str:
    """Configurations measured at several thread counts: speedup and efficiency against the fewest,
    flagged where the machine was busy, oversubscribed or the figure superlinear."""
    records = [record for file in inputs.results for record in file.rows]
    usable = [f.environment.get("usable_cpus") for f in inputs.results]
    usable_cpus = min((u for u in usable if isinstance(u, int)), default=None)
    found = scalings(records, usable_cpus)
    if not found:
        return ""
    counts = sorted({f.threads for s in found for f in s.figures})
    columns: list[Column[Scaling]] = [
        Column("function", lambda s: escape(s.name), lambda s: s.name),
        Column("inputs", lambda s: escape(s.inputs)),
    ]
    for count in counts:
        columns.append(
            # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
            Column(
                f"{count} thr ms",
                lambda s, c=count: _count_ms(s, c),  # type: ignore[misc]
                lambda s, c=count: _count(s, c),  # type: ignore[misc]
                True,
            )
        )
    # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
    for count in counts[1:]:
        columns += [
            Column(f"speedup {count}", lambda s, c=count: _scaled(s, c, "speedup"), numeric=True),  # type: ignore[misc]
            Column(f"efficiency {count}", lambda s, c=count: _scaled(s, c, "efficiency"), numeric=True),  # type: ignore[misc]
        ]
    columns.append(Column("flags", lambda s: flag_badges(s.flags), lambda s: " ".join(s.flags)))
    return (
        f"<p>{len(found)} configurations measured at several thread counts ({', '.join(map(str, counts))}); "
        f"usable CPUs: {usable_cpus if usable_cpus is not None else '?'}.</p>"
        + plot(
            view_charts.thread_scaling(found),
            "Speedup of each configuration's forward median over its fewest threads (grey), their "
            "median (red) and the ideal linear speedup (dashed); a configuration with a figure "
            "measured while another process was busy is dotted and left out of the median.",
        )
        + data_table("threads-table", columns, found, flagged=lambda s: bool(s.flags))
    )


def factor_view(factor: Factor) -> Callable[[ReportInputs], str]:
    """The section of one ``Factor``: every configuration measured at its default and another of its
    values, with each value's median and its ratio to the default's."""

    def view(inputs: ReportInputs) -> str:
        records = [record for file in inputs.results for record in file.rows]
        rows = factor_rows(records, factor)
        if not rows:
            return ""
        values = values_of(rows, factor)
        columns: list[Column[FactorRow]] = [
            Column("function", lambda r: escape(r.key.name), lambda r: r.key.op),
            Column("inputs", lambda r: escape(r.inputs)),
            Column("phase", lambda r: escape(r.phase)),
        ]
        default = factor.shown(factor.default)
        for value in values:
            columns.append(
                # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
                Column(
                    f"{factor.shown(value)} ms",
                    lambda r, v=value: _ms(r.medians.get(v)),  # type: ignore[misc]
                    lambda r, v=value: r.medians.get(v),  # type: ignore[misc]
                    True,
                )
            )
        for value in values[1:]:
            columns.append(
                Column(
                    f"{factor.shown(value)} / {default}",
                    lambda r, v=value: _ratio(r.ratio(v, factor.default)),  # type: ignore[misc]
                    lambda r, v=value: r.ratio(v, factor.default),  # type: ignore[misc]
                    True,
                )
            )
        columns.append(Column("flags", lambda r: flag_badges(["busy_machine"] if r.busy else [])))
        return (
            f"<p>{len(rows)} rows measured at {escape(', '.join(factor.shown(v) for v in values))} "
            f"({escape(factor.setting)}); each ratio is against {escape(default)}.</p>"
            + data_table(f"{factor.setting}-table", columns, rows, flagged=lambda r: r.busy)
        )

    return view


def _ratio(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.2f}"


def _count(scaling: Scaling, count: int) -> float | None:
    return next((f.median_s for f in scaling.figures if f.threads == count), None)


def _count_ms(scaling: Scaling, count: int) -> str:
    figure = next((f for f in scaling.figures if f.threads == count), None)
    if figure is None:
        return "—"
    return _ms(figure.median_s) + (' <span class="muted">(busy)</span>' if figure.busy else "")


def _scaled(scaling: Scaling, count: int, measure: str) -> str:
    figure = next((f for f in scaling.figures if f.threads == count), None)
    if figure is None or figure is scaling.figures[0]:
        return "—"
    value = getattr(scaling, measure)(figure)
    return BUSY if value is None else f"{value:.2f}"


def sensitivity(inputs: ReportInputs) -> str:
    """Per fuzzed or skewed sweep: each operator's time per element against its element count."""
    parts = []
    for index, file in enumerate(inputs.results):
        mode = file.environment.get("shapes", "standard")
        points = sensitivity_points(file.rows) if mode != "standard" else []
        if not points:
            continue
        columns: list[Column[Point]] = [
            Column("operator", lambda p: escape(p.op), lambda p: p.op),
            Column("largest tensor", lambda p: escape("x".join(map(str, p.shape)) or "scalar")),
            Column("elements", lambda p: str(p.elements), lambda p: p.elements, True),
            Column("layout", lambda p: "strided" if p.strided else "contiguous", lambda p: p.strided),
            Column("fwd ms", lambda p: _ms(p.median_s), lambda p: p.median_s, True),
            Column("ns / element", lambda p: number(p.ns_per_element, 3), lambda p: p.ns_per_element, True),
        ]
        checksum = str(file.environment.get("shapes_checksum") or "")[:12]
        parts.append(
            f"<h3>{escape(file.path)} ({escape(mode)} shapes, checksum {escape(checksum)})</h3>"
            + plot(
                view_charts.sensitivity(points),
                "Forward median per element of the largest input against its element count: the "
                "fixed cost of a call dominates on the left, memory bandwidth on the right; hollow "
                "markers are strided inputs.",
            )
            + data_table(f"sensitivity-{index}", columns, points)
        )
    return "".join(parts)
