"""``opperf model``'s report as Markdown: the operator table, the top configurations, the totals."""

from __future__ import annotations

from opperf.results.inputs import describe_inputs
from opperf.results.model_report import ModelReport
from opperf.utils.markdown_table import markdown_table

TOP_CONFIGURATIONS = 10


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _share(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.1f}%"


def render_model_markdown(report: ModelReport) -> str:
    """The report's text: which operators dominate the model, in-model and standalone."""
    shape = ",".join(map(str, report.input_shape))
    operators = [
        [
            row.op,
            row.configurations,
            row.calls,
            _ms(row.in_model_s),
            _share(row.in_model_share),
            _ms(row.standalone_s),
            _share(row.standalone_share),
            "-" if row.ratio is None else f"{row.ratio:.2f}",
        ]
        for row in report.operators
    ]
    top = [
        [c.op, describe_inputs(dict(c.inputs)), c.calls, _ms(c.median_s), _ms(c.total_s), c.status]
        for c in report.configurations[:TOP_CONFIGURATIONS]
    ]
    coverage = "-" if report.coverage is None else f"{report.coverage * 100:.1f}%"
    measured = report.in_model_of_measured_s
    ratio = report.standalone_total_s / measured if measured else None
    missing = report.not_measured
    lines = [
        f"# {report.framework} {report.model} ({shape}, {report.mode}): time per operator",
        "",
        "Times are per forward pass, in milliseconds. In-model: the framework's profiler inside the model; "
        "standalone: each distinct configuration replayed alone (median) times its calls. Their ratio "
        "(standalone / in-model) is a finding (fusion, warm caches, layout, dispatch), not an error.",
        "",
        markdown_table(
            operators,
            headers=[
                "operator",
                "configs",
                "calls",
                "in-model ms",
                "share",
                "standalone ms",
                "share",
                "standalone / in-model",
            ],
        ),
        "",
        f"## Top {min(TOP_CONFIGURATIONS, len(report.configurations))} configurations by standalone time "
        "x calls",
        "",
        markdown_table(top, headers=["operator", "inputs", "calls", "median ms", "total ms", "status"]),
        "",
        "## Totals",
        "",
        f"- end-to-end model time: {_ms(report.end_to_end_s)} ms per forward pass (median, no profiler); "
        f"{_ms(report.profiled_wall_s)} ms per profiled pass",
        f"- operators in-model: {_ms(report.in_model_total_s)} ms, {coverage} of the profiled passes' "
        "end-to-end time",
        f"- operators standalone: {_ms(report.standalone_total_s)} ms"
        + (f", {ratio:.2f}x their in-model total" if ratio is not None else "")
        + (f"; not measured in full, so left out: {', '.join(missing)}" if missing else ""),
        f"- profiled by: {report.profiled_by}",
        f"- captured by: {report.captured_by}",
        "",
    ]
    return "\n".join(lines)
