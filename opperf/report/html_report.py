"""``opperf report --html``: one self-contained page over results and diff files.

The page is a list of sections, each a pure function of the inputs that returns "" when its data
is absent, so a section appears only where its records exist (thread scaling when a configuration
was measured at several thread counts, stage speedups when at several stages, per-tag speedups for
long-tail operators, shape sensitivity for fuzzed shapes, a model's time share when a model report
is given, a waterfall per diff file; ``html_views``). A new kind of record is one more entry in
``SECTIONS``.
Plots are inline SVG and the table script is inlined: the page loads nothing from anywhere.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from opperf.report import charts, html_views
from opperf.report.diff_rows import DiffFile, DiffRow
from opperf.report.factors import FACTORS
from opperf.report.inputs import ModelFile, ReportInputs
from opperf.report.page import (
    Column,
    cards,
    data_table,
    escape,
    flag_badges,
    key_value_table,
    note_paragraphs,
    number,
    page,
    plot,
    section,
)
from opperf.results.record import Phase, Record
from opperf.results.rows import MS, Group, ResultsFile, comparison_groups, environment_items

SHOWN = 25
"""Configurations a distribution or comparison plot shows (the tables list them all)."""


@dataclass(frozen=True)
class Section:
    """A part of the page: its anchor and title, and how to render it ("" when it has no data)."""

    anchor: str
    title: str
    render: Callable[[ReportInputs], str]


def _ms(value: float | None) -> str:
    return number(value * MS if value is not None else None)


def _timing_sort(row: Record, phase: str) -> float | None:
    timing = getattr(row, phase)
    return timing.median if timing else None


def result_columns(rows: Sequence[Record]) -> list[Column[Record]]:
    """The results table's columns; file, threads and stage only when they vary."""
    columns: list[Column[Record]] = [
        Column("function", lambda r: escape(r.function), lambda r: r.function),
        Column("inputs", lambda r: escape(r.inputs)),
    ]
    for name in ("source", "threads", "stage"):
        if len({getattr(r, name) for r in rows}) > 1:
            columns.append(
                # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
                Column(name, lambda r, n=name: escape(getattr(r, n)), lambda r, n=name: getattr(r, n))  # type: ignore[misc]
            )
    columns += [
        Column("status", lambda r: escape(r.status), lambda r: r.status),
        Column(
            "fwd ms", lambda r: _ms(_timing_sort(r, "forward")), lambda r: _timing_sort(r, "forward"), True
        ),
        Column(
            "fwd IQR %",
            lambda r: number(r.forward.iqr_ratio * 100, 3)
            if r.forward and r.forward.iqr_ratio is not None
            else "—",
            lambda r: r.forward.iqr_ratio if r.forward else None,
            True,
        ),
        Column(
            "n",
            lambda r: str(len(r.forward.samples)) if r.forward else "—",
            lambda r: len(r.forward.samples) if r.forward else None,
            True,
        ),
        Column(
            "bwd ms", lambda r: _ms(_timing_sort(r, "backward")), lambda r: _timing_sort(r, "backward"), True
        ),
        Column("GB/s", lambda r: number(r.gb_per_s, 3), lambda r: r.gb_per_s, True),
        Column("GFLOP/s", lambda r: number(r.gflop_per_s, 3), lambda r: r.gflop_per_s, True),
        Column(
            "% of roof",
            lambda r: number(r.of_roof * 100, 3) if r.of_roof is not None else "—",
            lambda r: r.of_roof,
            True,
        ),
        Column(
            "memory kB",
            lambda r: number(r.memory_bytes / 1e3 if r.memory_bytes is not None else None),
            lambda r: r.memory_bytes,
            True,
        ),
        Column(
            "flags / reason",
            lambda r: flag_badges(r.flags) + escape(r.reason or ""),
            lambda r: " ".join(r.flags) or (r.reason or ""),
        ),
    ]
    return columns


def results_table(table_id: str, rows: Sequence[Record]) -> str:
    return data_table(
        table_id,
        result_columns(rows),
        rows,
        row_class=lambda r: f"status-{r.status}",
        flagged=lambda r: bool(r.flags),
    )


def _summary(inputs: ReportInputs) -> str:
    parts = []
    for index, file in enumerate(inputs.results):
        parts.append(f"<h3>{escape(file.path)}</h3>{_file_summary(file, index)}")
    for diff in inputs.diffs:
        parts.append(f"<h3>{escape(diff.path)} (diff)</h3>{_diff_summary(diff)}")
    return "".join(parts)


def _file_summary(file: ResultsFile, index: int) -> str:
    environment = file.environment
    statuses = Counter(r.status for r in file.rows)
    flags = Counter(flag for r in file.rows for flag in r.flags)
    coverage = file.coverage
    headline = [
        ("records", len(file.rows)),
        *((f"records {status}", count) for status, count in sorted(statuses.items())),
        *((f"flagged {flag.replace('_', ' ')}", count) for flag, count in sorted(flags.items())),
    ]
    if coverage:
        headline.insert(
            0,
            (
                "operators of " + str(coverage.get("registered", "?")) + " registered",
                coverage.get("operators", "?"),
            ),
        )
    setting = ", ".join(
        f"{name} {environment[name]}"
        for name in ("framework", "device", "dtype", "profiler", "threads", "started")
        if environment.get(name) is not None
    )
    return (
        f'<p class="muted">{escape(setting)}</p>'
        + cards(headline)
        + _coverage_table(coverage, index)
        + "<details><summary>environment</summary>"
        + key_value_table(environment_items(environment))
        + "</details>"
    )


def _coverage_table(coverage: Mapping[str, Any], index: int) -> str:
    by_category = coverage.get("by_category") or {}
    if not by_category:
        return ""
    keys = ("operators", "ok", "skipped", "failed", "crashed", "timeout")
    items = sorted(by_category.items())
    columns: list[Column[Any]] = [Column("category", lambda i: escape(i[0]), lambda i: i[0])] + [
        # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
        Column(key, lambda i, k=key: str(i[1].get(k, 0)), lambda i, k=key: i[1].get(k, 0), True)  # type: ignore[misc]
        for key in keys
    ]
    not_run = [o for o in coverage.get("by_operator") or () if o.get("status") != "ok"]
    reasons = ""
    if not_run:
        reason_columns = [
            # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
            Column(name, lambda o, n=name: escape(o.get(n)), lambda o, n=name: o.get(n) or "")  # type: ignore[misc]
            for name in ("op", "category", "status", "reason")
        ]
        reasons = (
            f"<details><summary>{len(not_run)} operators that did not run, and why</summary>"
            + data_table(f"not-run-{index}", reason_columns, not_run)
            + "</details>"
        )
    table = data_table(f"coverage-{index}", columns, items)
    return f"<details><summary>coverage by category</summary>{table}</details>{reasons}"


def _time_by_category(inputs: ReportInputs) -> str:
    return plot(
        charts.time_by(inputs.rows, lambda r: [r.category], "category"),
        "Summed forward and backward medians of each category's configurations.",
    )


def _roofline(inputs: ReportInputs) -> str:
    peaks = next(
        (f.environment.get("machine_peaks") for f in inputs.results if f.environment.get("machine_peaks")),
        None,
    )
    caption = "Each configuration's forward median as achieved GFLOP/s against its arithmetic intensity"
    caption += (
        "; the lines are this machine's measured memory-bandwidth and GEMM roofs."
        if peaks
        else "; no machine peaks recorded."
    )
    return plot(charts.roofline(inputs.rows, peaks), caption)


def _distributions(inputs: ReportInputs) -> str:
    measured = [r for r in inputs.rows if r.forward and r.forward.samples]
    slowest = sorted(measured, key=lambda r: cast(Phase, r.forward).median, reverse=True)[:SHOWN]
    variable = sorted(
        (r for r in measured if cast(Phase, r.forward).iqr_ratio is not None),
        key=lambda r: cast(float, cast(Phase, r.forward).iqr_ratio),
        reverse=True,
    )[:SHOWN]
    return plot(
        charts.distributions(slowest, f"the {len(slowest)} slowest configurations"),
        "Every forward sample (dots) and their quartiles (boxes).",
    ) + plot(
        charts.distributions(variable, f"the {len(variable)} most variable configurations (IQR over median)"),
        "The spread behind the noisy flag: the configurations whose IQR is widest relative to the median.",
    )


def _comparison(inputs: ReportInputs) -> str:
    groups = comparison_groups(inputs.results)
    if not groups:
        return ""
    extreme = sorted(groups, key=lambda g: g.widest, reverse=True)[:SHOWN]
    namespaces = sorted({n for g in groups for n in g.names})
    always_first = {n for n in namespaces if all(g.first_name == n for g in groups if g.by_namespace(n))}
    columns: list[Column[Group]] = [
        Column("function", _group_functions, lambda g: g.first.short_function),
        Column("inputs", lambda g: escape(g.first.inputs)),
    ]
    if len({g.first.threads for g in groups}) > 1:
        columns.append(Column("threads", lambda g: escape(g.first.threads), lambda g: g.first.threads, True))
    for namespace in namespaces:
        columns.append(
            Column(
                f"{namespace} ms",
                # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
                lambda g, n=namespace: _ms(_median_in(g, n)),  # type: ignore[misc]
                lambda g, n=namespace: _median_in(g, n),  # type: ignore[misc]
                True,
            )
        )
        if namespace not in always_first:  # the first wherever present: no ratio of its own
            columns.append(
                Column(
                    f"{namespace} / first",
                    # Ignored: mypy cannot type a lambda with a default argument (the loop's value).
                    lambda g, n=namespace: number(_ratio_in(g, n), 3),  # type: ignore[misc]
                    lambda g, n=namespace: _ratio_in(g, n),  # type: ignore[misc]
                    True,
                )
            )
    columns.append(Column("flags", lambda g: flag_badges(sorted({f for r in g.rows for f in r.flags}))))
    return (
        f"<p>{len(groups)} configurations were measured in more than one namespace "
        f"({escape(', '.join(namespaces))}; matched on the function's name, the tensor shapes in order, "
        "the dtype, stage and thread count, or as an `opperf compare` file pairs them). The plot shows "
        f"the {len(extreme)} with the largest ratios either way; ratios are against the first "
        "namespace (a comparison's first, else the alphabetically first).</p>"
        + plot(
            charts.comparison(extreme),
            "Forward medians side by side, a bar per namespace; xratio is the namespace's median over "
            "the first's. Flags (busy machine, noisy) are in the table: a ratio between flagged "
            "figures is weak evidence.",
        )
        + data_table("comparison", columns, groups, flagged=lambda g: any(r.flags for r in g.rows))
    )


def _group_functions(group: Group) -> str:
    """The first's function name, then the others' where their names differ (a comparison pairs
    ``FullyConnected`` with ``torch.nn.functional.linear``)."""
    others = [r.function for r in group.rows[1:] if r.short_function != group.first.short_function]
    extra = f' <span class="muted">({escape(", ".join(others))})</span>' if others else ""
    return escape(group.first.short_function) + extra


def _median_in(group: Group, namespace: str) -> float | None:
    row = group.by_namespace(namespace)
    return cast(Phase, row.forward).median if row is not None else None


def _ratio_in(group: Group, namespace: str) -> float | None:
    row = group.by_namespace(namespace)
    return group.ratio(row) if row is not None and row is not group.first else None


def _tags(inputs: ReportInputs) -> str:
    tagged = [r for r in inputs.rows if r.tags]
    return plot(
        charts.time_by(tagged, lambda r: r.tags, "tag"),
        "Summed medians of the configurations carrying each tag (every stage and framework given).",
    )


def _tables(inputs: ReportInputs) -> str:
    by_category: dict[str, list[Record]] = defaultdict(list)
    for row in inputs.rows:
        by_category[row.category].append(row)
    parts = []
    for index, category in enumerate(sorted(by_category)):
        rows = by_category[category]
        flagged = sum(1 for r in rows if r.flags)
        not_ok = sum(1 for r in rows if r.status != "ok")
        parts.append(
            f'<details class="category" id="category-{escape(category)}"><summary>{escape(category)}: '
            f"{len(rows)} configurations, {flagged} flagged, {not_ok} not ok</summary>"
            + results_table(f"results-{index}", rows)
            + "</details>"
        )
    return "".join(parts)


def _diff_summary(file: DiffFile) -> str:
    counts = file.summary.get("counts") or {}
    geomean = file.summary.get("geomean_ratio")
    items = [("rows", len(file.rows)), *counts.items()]
    if geomean is not None:
        items.append(("geometric mean ratio", f"{geomean:.3g}"))
    items.append(("threshold", f"±{file.threshold:.0%}"))
    return cards(items) + note_paragraphs(file.notes)


def _diffs(inputs: ReportInputs) -> str:
    return "".join(_diff_section(index, file) for index, file in enumerate(inputs.diffs))


def _diff_section(index: int, file: DiffFile) -> str:
    ratios = [(r.ratio, r.verdict) for r in file.rows if r.ratio is not None and r.ratio > 0]
    columns: list[Column[DiffRow]] = [
        Column("function", lambda r: escape(r.name), lambda r: r.name),
        Column("inputs", lambda r: escape(r.inputs)),
        Column("phase", lambda r: escape(r.phase), lambda r: r.phase),
        Column(
            "verdict",
            lambda r: f'<span class="verdict-{escape(r.verdict)}">{escape(r.verdict)}</span>'
            + (" (indicative)" if r.indicative else ""),
            lambda r: r.verdict,
        ),
        Column("base ms", lambda r: _ms(r.base_s), lambda r: r.base_s, True),
        Column("new ms", lambda r: _ms(r.new_s), lambda r: r.new_s, True),
        Column("ratio", lambda r: number(r.ratio, 3), lambda r: r.ratio, True),
        Column(
            "95% interval",
            lambda r: f"{number(r.ratio_low, 3)}-{number(r.ratio_high, 3)}" if r.ratio_low else "—",
        ),
        Column("q", lambda r: number(r.q, 3), lambda r: r.q, True),
        Column("flags / reason", lambda r: flag_badges(r.flags) + escape(r.reason or "")),
    ]
    return (
        f"<h3>{escape(file.path)}</h3>"
        + plot(
            charts.waterfall(ratios, file.threshold),
            f"Every row's ratio, sorted: shaded, the ±{file.threshold:.0%} band a change must leave; "
            "grey, rows whose verdict is inconclusive (or not a timing verdict).",
        )
        + data_table(f"diff-{index}", columns, file.rows, flagged=lambda r: bool(r.flags))
    )


SECTIONS = (
    Section("summary", "Environment and coverage", _summary),
    Section("diffs", "Diffs", _diffs),
    Section("time-by-category", "Time by category", _time_by_category),
    Section("roofline", "Roofline", _roofline),
    Section("model", "Model time share", html_views.models),
    Section("comparison", "Namespaces compared", _comparison),
    Section("threads", "Thread scaling", html_views.threads),
    *(Section(factor.setting, factor.title, html_views.factor_view(factor)) for factor in FACTORS),
    Section("stages", "Stage speedups", html_views.stages),
    Section("tag-stages", "Long-tail speedups by tag", html_views.tag_stages),
    Section("tags", "Time by tag", _tags),
    Section("sensitivity", "Shape sensitivity", html_views.sensitivity),
    Section("distributions", "Distributions", _distributions),
    Section("tables", "Results by category", _tables),
)
"""The page's sections in order; one without data is left out, and so is its link."""


def render_html(inputs: ReportInputs) -> str:
    """The whole page: a title, links to the sections that have data, then those sections."""
    rendered = [(s, s.render(inputs)) for s in SECTIONS]
    present = [(s, content) for s, content in rendered if content]
    files: tuple[ResultsFile | DiffFile | ModelFile, ...] = (*inputs.results, *inputs.diffs, *inputs.models)
    names = ", ".join(f.path for f in files)
    toc = "".join(f'<a href="#{s.anchor}">{escape(s.title)}</a>' for s, _ in present)
    body = (
        f'<h1>opperf report</h1><p class="muted">{escape(names)}</p><nav class="toc">{toc}</nav>'
        + "".join(section(s.anchor, s.title, content) for s, content in present)
    )
    return page(f"opperf report: {names}", body, inline_assets=True)
