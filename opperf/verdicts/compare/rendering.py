"""A comparison as readers get it: a Markdown table with each other namespace's ratio against the
first, its interval and verdict, notes and what could not be compared; or a results document whose
``comparison.rows`` pair the records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from opperf.frameworks import framework_of_namespace, get_backend
from opperf.measure.benchmark import RunOptions
from opperf.results.measurement import TensorSpec
from opperf.utils.markdown_table import markdown_table
from opperf.utils.words import counted
from opperf.verdicts.compare.comparison import Comparison, Row, forward_ratio, median_of, verdicts
from opperf.verdicts.compare.namespaces import Versus, no_work_note


def _versus_cell(found: Versus | None) -> str:
    if found is None:
        return "—"
    interval = f" ({found.low:.2f}-{found.high:.2f})" if found.low is not None else ""
    return f"{found.ratio:.2f}{interval} {found.verdict.value}"


def table_rows(rows: Sequence[Row], namespaces: Sequence[str]) -> list[list[str]]:
    """Per row: operator, inputs, then each namespace's forward and backward medians (ms), and for
    each namespace after the first its ratios against the first, with their intervals and verdicts."""
    found = verdicts(rows, namespaces)
    rendered = []
    for index, row in enumerate(rows):
        cells = [row.operator, _inputs(row.configuration)]
        for namespace in namespaces:
            measurement = row.measurements.get(namespace)
            cells += [_ms(median_of(measurement, "forward")), _ms(median_of(measurement, "backward"))]
            if namespace != namespaces[0]:
                cells += [
                    _versus_cell(found.get((index, namespace, phase))) for phase in ("forward", "backward")
                ]
        rendered.append(cells)
    return rendered


def table_headers(namespaces: Sequence[str]) -> list[str]:
    headers = ["operator", "inputs"]
    for namespace in namespaces:
        headers += [f"{namespace} fwd ms", f"{namespace} bwd ms"]
        if namespace != namespaces[0]:
            headers += [f"fwd vs {namespaces[0]}", f"bwd vs {namespaces[0]}"]
    return headers


def notes(rows: Sequence[Row], namespaces: Sequence[str]) -> list[list[str]]:
    """What a reader of the table should know of a row: why a verdict is inconclusive (with the doubt
    flags half or more of a side's rounds carried), and a phase one namespace likely does no work in."""
    found = verdicts(rows, namespaces)
    listed = []
    for index, row in enumerate(rows):
        for phase in ("forward", "backward"):
            medians = {ns: m for ns in namespaces if (m := median_of(row.measurements.get(ns), phase))}
            said = [no_work_note(medians, phase)] if len(medians) > 1 else []
            for namespace in namespaces[1:]:
                verdict = found.get((index, namespace, phase))
                if verdict is not None and verdict.reason:
                    flags = f" (flags: {', '.join(verdict.flags)})" if verdict.flags else ""
                    said.append(f"{namespace} inconclusive: {verdict.reason}{flags}")
            listed += [[row.operator, _inputs(row.configuration), phase, note] for note in said if note]
    return listed


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1e3:.4f}" if seconds is not None else "—"


def _inputs(configuration: Mapping[str, Any]) -> str:
    def show(value: object) -> str:
        if isinstance(value, TensorSpec):
            return "x".join(map(str, value.shape))
        if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
            return "x".join(map(str, value))
        if isinstance(value, tuple) and value and all(isinstance(v, TensorSpec) for v in value):
            return "[" + ", ".join(show(v) for v in value) + "]"
        return str(value)

    return ", ".join(f"{name}={show(value)}" for name, value in configuration.items())


def comparison_document(
    comparison: Comparison, namespaces: Sequence[str], options: RunOptions, command_line: Sequence[str]
) -> dict[str, object]:
    """The comparison as a results document: every measurement a record (with its namespace and
    function), and ``comparison.rows`` pairing them per operator and configuration, with each
    namespace's record index (None where it was not measured), forward ratio and problem; a stopped
    comparison says so (``comparison.interrupted``, the signal's name, and ``selected``)."""
    from opperf.results.document import SCHEMA_VERSION, record

    rows = comparison.rows
    records: list[dict[str, Any]] = []
    paired = []
    found = verdicts(rows, namespaces)
    for index, row in enumerate(rows):
        indices: dict[str, int | None] = {}
        for namespace in namespaces:
            measurement = row.measurements.get(namespace)
            indices[namespace] = None if measurement is None else len(records)
            if measurement is not None:
                records.append(record(measurement))
        ratios = {ns: forward_ratio(row, ns, namespaces[0]) for ns in namespaces}
        paired.append(
            {
                "operator": row.operator,
                "inputs": _inputs(row.configuration),
                "records": indices,
                "rounds": {ns: len(found) for ns, found in row.rounds.items()},
                "forward_ratio": {ns: round(r, 4) if r is not None else None for ns, r in ratios.items()},
                "versus": {
                    ns: {
                        phase: _versus_dict(found.get((index, ns, phase)))
                        for phase in ("forward", "backward")
                    }
                    for ns in namespaces[1:]
                },
                "problems": dict(row.problems),
            }
        )
    frameworks = dict.fromkeys(framework_of_namespace(namespace) for namespace in namespaces)
    environment = {
        "namespaces": list(namespaces),
        "threads": options.threads,
        "device": str(options.device),
        "dtype": options.dtype,
        "profiler": options.profiler,
        "profilers": {name: replace(options, framework=name).profiler_in_effect for name in frameworks},
        "frameworks": {name: get_backend(name).environment() for name in frameworks},
        "command_line": list(command_line),
        "interrupted": comparison.stop is not None,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "environment": environment,
        "results": records,
        "comparison": {
            "namespaces": list(namespaces),
            "threads": options.threads,
            "interrupted": comparison.signal_name,
            "selected": comparison.selected,
            "rows": paired,
        },
    }


def stopped_note(comparison: Comparison) -> str:
    """What a stopped comparison's reader must know first: which signal, and what it left out."""
    short = sum(row.short_of is not None for row in comparison.rows)
    return (
        f"**Interrupted** ({comparison.signal_name}): {len(comparison.rows)} of "
        f"{counted(comparison.selected, 'configuration')} got a round in every namespace; "
        f"{counted(short, 'row')} short of the rounds each gets "
        f"{'is' if short == 1 else 'are'} inconclusive. Run the command again for the rest."
    )


def _versus_dict(found: Versus | None) -> dict[str, object] | None:
    if found is None:
        return None
    return {
        "ratio": round(found.ratio, 4),
        "ratio_ci95": [round(found.low, 4), round(cast(float, found.high), 4)]
        if found.low is not None
        else None,
        "verdict": found.verdict.value,
        "reason": found.reason,
        "flags": list(found.flags),
    }


TIMERS: Mapping[str, str] = {
    "device": "the device time of its kernels",
    "profiler": "its framework's profiler (the operator's own time)",
    "host": "the Python timer around each synchronised call (its dispatch included)",
}
"""How each timer a measurement names (``Measurement.timer``) reads in a comparison's header."""


def timers_note(rows: Sequence[Row], namespaces: Sequence[str]) -> str:
    """Where the namespaces were timed differently, which timed each (a ratio across them includes
    what one timer counts and the other does not: JAX's dispatch against MXNet's operator time);
    nothing where one timer timed them all."""
    timed: dict[str, set[str]] = {namespace: set() for namespace in namespaces}
    for row in rows:
        for namespace, measured in row.measurements.items():
            if measured is not None and measured.timer is not None:
                timed[namespace].add(measured.timer)
    if len({timer for timers in timed.values() for timer in timers}) < 2:
        return ""
    said = "; ".join(
        f"{namespace} by {' and '.join(TIMERS[timer] for timer in sorted(timers))}"
        for namespace, timers in timed.items()
        if timers
    )
    return (
        " The namespaces were timed differently, so a ratio includes what one timer counts and the other "
        f"does not: {said}."
    )


def render_markdown(comparison: Comparison, namespaces: Sequence[str], threads: int | None = None) -> str:
    """The comparison as a Markdown table, then what could not be compared and why; a stopped one
    says what it left out first."""
    rows = comparison.rows
    threads_note = f" Every namespace ran with {counted(threads, 'intra-op thread')}." if threads else ""
    threads_note += timers_note(rows, namespaces)
    lines = [
        f"# {' vs '.join(namespaces)}",
        "",
        f"Median forward and backward times over each configuration's rounds, the namespaces taking turns; "
        f"each namespace against {namespaces[0]}: the ratio of the rounds' fastest passes, its 95% interval "
        "and verdict, as opperf diff decides (slower: that namespace is slower)." + threads_note,
        "",
        *([stopped_note(comparison), ""] if comparison.stop is not None else []),
        markdown_table(table_rows(rows, namespaces), headers=table_headers(namespaces)),
        "",
    ]
    problems = [
        [row.operator, _inputs(row.configuration), namespace, problem]
        for row in rows
        for namespace, problem in row.problems.items()
    ]
    failures = [
        [row.operator, _inputs(row.configuration), namespace, f"{m.status.value}: {m.reason}"]
        for row in rows
        for namespace, m in row.measurements.items()
        if m is not None and m.forward is None
    ]
    listed = notes(rows, namespaces)
    if listed:
        lines += ["## Notes", "", markdown_table(listed, headers=("operator", "inputs", "phase", "note")), ""]
    if problems or failures:
        headers = ("operator", "inputs", "namespace", "why not compared")
        lines += [
            "## Not compared",
            "",
            markdown_table(problems + failures, headers=headers),
            "",
        ]
    return "\n".join(lines) + "\n"
