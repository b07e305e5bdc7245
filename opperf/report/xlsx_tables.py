"""The tables a spreadsheet holds, built from the JSON documents (results, diff): results, a
per-category summary, coverage with reasons and the environment for a sweep; the rows with their
ratios and the summary for a diff; operators, configurations and totals for a model report.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, cast

from opperf.report.diff_rows import diff_file
from opperf.report.xlsx import SheetColumn, Table
from opperf.results.inputs import describe_inputs
from opperf.results.model_report import ModelReport
from opperf.results.record import Record
from opperf.results.rows import MS, environment_items, results_file

MILLISECONDS = "0.0000"
PERCENT = "0.0%"
RATE = "0.000"
RATIO = "0.000"
COUNT = "0"


def _ms(value: float | None) -> float | None:
    return value * MS if value is not None else None


def _result_cells(row: Record) -> tuple[object, ...]:
    forward, backward = row.forward, row.backward
    return (
        row.framework, row.namespace, row.op, row.function, row.category, row.inputs, row.dtype,
        row.threads, row.stage, row.status, row.reason,
        _ms(forward.median) if forward else None,
        _ms(forward.low) if forward else None,
        _ms(forward.high) if forward else None,
        forward.iqr_ratio if forward else None,
        len(forward.samples) if forward else None,
        _ms(backward.median) if backward else None,
        backward.iqr_ratio if backward else None,
        row.gb_per_s, row.gflop_per_s, row.intensity, row.of_roof, row.bound,
        row.memory_bytes / 1e3 if row.memory_bytes is not None else None,
        ", ".join(row.flags),
    )  # fmt: skip


RESULT_COLUMNS = (
    SheetColumn("framework", 9), SheetColumn("namespace", 14), SheetColumn("op", 26),
    SheetColumn("function", 30), SheetColumn("category", 16), SheetColumn("inputs", 44),
    SheetColumn("dtype", 9), SheetColumn("threads", 8, COUNT), SheetColumn("stage", 8),
    SheetColumn("status", 9), SheetColumn("reason", 40),
    SheetColumn("fwd median ms", 13, MILLISECONDS), SheetColumn("fwd 95% low ms", 13, MILLISECONDS),
    SheetColumn("fwd 95% high ms", 13, MILLISECONDS), SheetColumn("fwd IQR / median", 13, PERCENT),
    SheetColumn("fwd n", 7, COUNT), SheetColumn("bwd median ms", 13, MILLISECONDS),
    SheetColumn("bwd IQR / median", 13, PERCENT), SheetColumn("GB/s", 9, RATE),
    SheetColumn("GFLOP/s", 9, RATE),
    SheetColumn("FLOP per byte", 11, RATE), SheetColumn("of roof", 9, PERCENT), SheetColumn("bound", 9),
    SheetColumn("peak memory kB", 13, "0.0"), SheetColumn("flags", 30),
)  # fmt: skip


def _category_summary(rows: tuple[Record, ...]) -> Table:
    by_category: dict[str, list[Record]] = defaultdict(list)
    for row in rows:
        by_category[row.category].append(row)
    table_rows = []
    for category in sorted(by_category):
        mine = by_category[category]
        medians = [cast(float, _ms(r.forward.median)) for r in mine if r.forward]
        backward = [cast(float, _ms(r.backward.median)) for r in mine if r.backward]
        table_rows.append((
            category, len(mine), sum(r.status == "ok" for r in mine), sum(r.status != "ok" for r in mine),
            sum(bool(r.flags) for r in mine), sum(medians), statistics.median(medians) if medians else None,
            max(medians, default=None), sum(backward),
        ))  # fmt: skip
    columns = (
        SheetColumn("category", 18), SheetColumn("configurations", 14, COUNT), SheetColumn("ok", 7, COUNT),
        SheetColumn("not ok", 7, COUNT), SheetColumn("flagged", 8, COUNT),
        SheetColumn("fwd total ms", 13, MILLISECONDS), SheetColumn("fwd median ms", 13, MILLISECONDS),
        SheetColumn("fwd slowest ms", 13, MILLISECONDS), SheetColumn("bwd total ms", 13, MILLISECONDS),
    )  # fmt: skip
    return Table("summary by category", columns, tuple(table_rows))


def _coverage(coverage: Mapping[str, Any]) -> Table:
    operators = coverage.get("by_operator") or ()
    columns = (
        SheetColumn("op", 28), SheetColumn("category", 16), SheetColumn("status", 9),
        SheetColumn("reason", 70), SheetColumn("aliases", 30),
    )  # fmt: skip
    rows = tuple(
        (o.get("op"), o.get("category"), o.get("status"), o.get("reason"), ", ".join(o.get("aliases") or ()))
        for o in operators
    )
    return Table("coverage", columns, rows)


def _environment(environment: Mapping[str, Any]) -> Table:
    return Table(
        "environment",
        (SheetColumn("setting", 24), SheetColumn("value", 100)),
        tuple(environment_items(environment)),
    )


def results_tables(document: Mapping[str, Any], path: str = "") -> list[Table]:
    """A results document's sheets: results, summary by category, coverage, environment."""
    file = results_file(document, path)
    return [
        Table("results", RESULT_COLUMNS, tuple(_result_cells(r) for r in file.rows)),
        _category_summary(file.rows),
        _coverage(file.coverage),
        _environment(file.environment),
    ]


DIFF_COLUMNS = (
    SheetColumn("framework", 9), SheetColumn("namespace", 14), SheetColumn("op", 26),
    SheetColumn("inputs", 44), SheetColumn("phase", 9), SheetColumn("verdict", 13),
    SheetColumn("base ms", 14, MILLISECONDS), SheetColumn("new ms", 14, MILLISECONDS),
    SheetColumn("ratio", 9, RATIO, centred_scale=True), SheetColumn("ratio 95% low", 12, RATIO),
    SheetColumn("ratio 95% high", 12, RATIO), SheetColumn("q", 9, "0.000"),
    SheetColumn("flags", 26), SheetColumn("reason", 60),
)  # fmt: skip


def diff_tables(document: Mapping[str, Any]) -> list[Table]:
    """A diff document's sheets: every row (the ratio shaded around 1), then the summary."""
    file = diff_file(document, "")
    rows = tuple(
        (
            r.framework, r.namespace, r.op, r.inputs, r.phase, r.verdict,
            _ms(r.base_s), _ms(r.new_s),
            r.ratio, r.ratio_low, r.ratio_high, r.q, ", ".join(r.flags), r.reason,
        )
        for r in file.rows
    )  # fmt: skip
    summary = file.summary
    counts = summary.get("counts") or {}
    facts = [
        *((f"rows {verdict}", count) for verdict, count in counts.items()),
        ("geometric mean ratio", summary.get("geomean_ratio")),
        ("threshold", summary.get("threshold")),
        ("alpha", summary.get("alpha")),
        ("base files", ", ".join((summary.get("files") or {}).get("base", ()))),
        ("new files", ", ".join((summary.get("files") or {}).get("new", ()))),
    ]
    return [
        Table("diff", DIFF_COLUMNS, rows),
        Table("summary", (SheetColumn("figure", 24), SheetColumn("value", 80)), tuple(facts)),
    ]


MODEL_OPERATOR_COLUMNS = (
    SheetColumn("operator", 24), SheetColumn("configurations", 14, COUNT), SheetColumn("calls", 8, COUNT),
    SheetColumn("in-model ms", 12, MILLISECONDS), SheetColumn("in-model share", 14, PERCENT),
    SheetColumn("standalone ms", 13, MILLISECONDS), SheetColumn("standalone share", 15, PERCENT),
    SheetColumn("standalone / in-model", 19, RATIO, centred_scale=True),
)  # fmt: skip
MODEL_CONFIGURATION_COLUMNS = (
    SheetColumn("operator", 24), SheetColumn("inputs", 80), SheetColumn("calls", 8, COUNT),
    SheetColumn("median ms", 12, MILLISECONDS), SheetColumn("median x calls ms", 16, MILLISECONDS),
    SheetColumn("status", 12),
)  # fmt: skip


def model_tables(report: ModelReport) -> list[Table]:
    """A model report's sheets: its operators (the standalone over in-model ratio shaded around 1),
    every captured configuration, and the totals."""
    operators = tuple(
        (
            r.op, r.configurations, r.calls, _ms(r.in_model_s), r.in_model_share,
            _ms(r.standalone_s), r.standalone_share, r.ratio,
        )
        for r in report.operators
    )  # fmt: skip
    configurations = tuple(
        (c.op, describe_inputs(dict(c.inputs)), c.calls, _ms(c.median_s), _ms(c.total_s), c.status)
        for c in report.configurations
    )
    facts = (
        ("framework", report.framework),
        ("model", report.model),
        ("input shape", ",".join(map(str, report.input_shape))),
        ("mode", report.mode),
        ("end-to-end ms per pass (no profiler)", _ms(report.end_to_end_s)),
        ("profiled pass ms", _ms(report.profiled_wall_s)),
        ("operators in-model ms", _ms(report.in_model_total_s)),
        ("operators standalone ms", _ms(report.standalone_total_s)),
        ("operators not measured in full (left out)", ", ".join(report.not_measured) or "none"),
        ("operators' share of the profiled pass", report.coverage),
        ("profiled by", report.profiled_by),
        ("captured by", report.captured_by),
    )
    return [
        Table("operators", MODEL_OPERATOR_COLUMNS, operators),
        Table("configurations", MODEL_CONFIGURATION_COLUMNS, configurations),
        Table("summary", (SheetColumn("figure", 36), SheetColumn("value", 60)), facts),
    ]
