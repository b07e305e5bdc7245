"""Markdown rendering: an environment header, one table per category, then what did not run and why."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from opperf.report.fused import render_fused
from opperf.report.scaling import render_scaling
from opperf.report.sensitivity import render_sensitivity
from opperf.report.stages import render_tag_speedups
from opperf.results.coverage import STATUS_KEYS
from opperf.results.record import Phase, Record, read_records
from opperf.utils.markdown_table import markdown_table

MS = 1e3
HEADERS = (
    "Operator",
    "Inputs",
    "Fwd median (ms)",
    "Fwd IQR %",
    "Fwd n",
    "Bwd median (ms)",
    "Bwd IQR %",
    "Bwd n",
    "GB/s",
    "GFLOP/s",
    "% of roof",
    "Peak memory (kB)",
    "Flags",
)
ENVIRONMENT_KEYS = (
    "framework",
    "framework_version",
    "framework_settings",
    "threads",
    "worker_cpus",
    "usable_cpus",
    "thread_workers",
    "device",
    "dtype",
    "profiler",
    "sampling",
    "target_precision",
    "budget_s",
    "warmup",
    "runs",
    "harness_overhead_s",
    "size_profile",
    "shapes",
    "shapes_checksum",
    "cpu_model",
    "cpu_count",
    "harness_efficiency",
    "worker_peak_rss_bytes",
    "python",
    "started",
    "wall_seconds",
)


def _timing(phase: Phase | None) -> list[str]:
    """Median, IQR as a percentage of it, and sample count: the compact view; the JSON has the rest."""
    if phase is None:
        return ["—"] * 3
    spread = f"{phase.iqr_ratio * 100:.1f}" if phase.iqr_ratio is not None else "—"
    return [f"{phase.median * MS:.4f}", spread, str(len(phase.samples))]


def _roofline(record: Record) -> list[str]:
    if record.gb_per_s is None or record.gflop_per_s is None:
        return ["—"] * 3
    roof = f"{record.of_roof * 100:.3g} ({record.bound})" if record.of_roof is not None else "—"
    return [f"{record.gb_per_s:.3g}", f"{record.gflop_per_s:.3g}", roof]


def _name(record: Record, threads: bool) -> str:
    """The function users call, with the registry's name beside it where the two differ, the stage
    where not eager and, where the sweep had threads as a factor (``threads``), the thread count."""
    function, op = record.function, record.op
    named = function if function.endswith(f".{op}") else f"{function} ({op})"
    shown = ([record.run_form] if record.run_form != "eager" else []) + (
        [f"{record.threads} thr"] if threads else []
    )
    return f"{named} [{', '.join(shown)}]" if shown else named


def _row(record: Record, threads: bool) -> list[str]:
    memory = record.memory_bytes
    return [
        _name(record, threads),
        record.inputs,
        *_timing(record.forward),
        *_timing(record.backward),
        *_roofline(record),
        f"{memory / 1e3:.3f}" if memory is not None else "—",
        ", ".join(record.flags),
    ]


def _setting(value: object) -> str:
    """An environment value as text: ``engine=ThreadedEnginePerDevice`` for a mapping, ``0, 1`` for a list."""
    if isinstance(value, dict):
        return ", ".join(f"{key}={item}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def render_markdown(document: dict[str, Any]) -> str:
    environment = document["environment"]
    lines = ["# Operator benchmarks", ""]
    lines += [
        f"- **{key}**: {_setting(environment[key])}"
        for key in ENVIRONMENT_KEYS
        if environment.get(key) is not None  # a setting that does not apply is left out, not "None"
    ]
    peaks = environment.get("machine_peaks")
    if peaks:
        lines.append(
            f"- **machine peaks** (roofs): {peaks['bandwidth_bytes_per_s'] / 1e9:.3g} GB/s memory bandwidth, "
            f"{peaks['gemm_flops_per_s'] / 1e9:.3g} GFLOP/s float32 GEMM"
        )
    coverage = document.get("coverage")
    if coverage:
        counts = ", ".join(f"{key} {coverage[key]}" for key in STATUS_KEYS if coverage.get(key))
        lines.append(
            f"- **operators**: {coverage['operators']} distinct, of {coverage['registered']} "
            f"registered names ({counts})"
        )
    lines.append("")
    records = read_records(document)
    several = len({r.threads for r in records}) > 1  # threads a factor: each row says its count
    by_category: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if record.status == "ok":
            by_category[record.category].append(record)
    for category in sorted(by_category):
        lines += [f"## {category}", ""]
        rows = [_row(r, several) for r in by_category[category]]
        lines += [markdown_table(rows, headers=HEADERS, disable_numparse=True), ""]
    per_tag = render_tag_speedups(records)
    if per_tag:
        lines += ["## Stage speedups per tag (long-tail operators)", "", per_tag, ""]
    lines += render_fused(records)
    lines += render_sensitivity(environment, records)
    lines += render_scaling(environment, records)
    not_ok = [r for r in records if r.status != "ok"]
    if not_ok:
        lines += ["## Not benchmarked", ""]
        rows = [[_name(r, several), r.category, r.status, r.inputs, r.reason or ""] for r in not_ok]
        lines += [
            markdown_table(rows, headers=("Operator", "Category", "Status", "Inputs", "Reason")),
            "",
        ]
    return "\n".join(lines) + "\n"
