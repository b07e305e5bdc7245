"""Markdown rendering: an environment header, one table per category, then what did not run and why."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from opperf.report.fused import render_fused
from opperf.report.scaling import render_scaling
from opperf.report.sensitivity import render_sensitivity
from opperf.report.stages import render_tag_speedups
from opperf.results.coverage import STATUS_KEYS
from opperf.results.inputs import describe_inputs
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


def _timing(block: dict[str, Any] | None) -> list[str]:
    """Median, IQR as a percentage of it, and sample count: the compact view; the JSON has the rest."""
    if not block:
        return ["—"] * 3
    ratio = block.get("iqr_ratio")
    spread = f"{ratio * 100:.1f}" if ratio is not None else "—"
    return [f"{block['median_s'] * MS:.4f}", spread, str(block["n"])]


def _roofline(block: dict[str, Any] | None) -> list[str]:
    if not block:
        return ["—"] * 3
    fractions = block.get("fraction_of_peak")
    roof = f"{fractions['of_roof'] * 100:.3g} ({fractions['bound']})" if fractions else "—"
    return [f"{block['gb_per_s']:.3g}", f"{block['gflop_per_s']:.3g}", roof]


def _name(result: dict[str, Any]) -> str:
    """The function users call, with the registry's name beside it where the two differ."""
    function = str(result.get("function") or f"{result['namespace']}.{result['op']}")
    named = function if function.endswith(f".{result['op']}") else f"{function} ({result['op']})"
    stage = result.get("stage", "eager")
    shown = f"{stage}: {result['variant']}" if result.get("variant") else stage
    return named if shown == "eager" else f"{named} [{shown}]"


def _row(result: dict[str, Any]) -> list[str]:
    memory = result.get("memory_peak_bytes")
    return [
        _name(result),
        describe_inputs(result["inputs"]),
        *_timing(result["forward"]),
        *_timing(result["backward"]),
        *_roofline(result.get("roofline")),
        f"{memory / 1e3:.3f}" if memory is not None else "—",
        ", ".join(result.get("flags") or ()),
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
    results = document["results"]
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
    by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        if result["status"] == "ok":
            by_category[result["category"]].append(result)
    for category in sorted(by_category):
        lines += [f"## {category}", ""]
        rows = [_row(r) for r in by_category[category]]
        lines += [markdown_table(rows, headers=HEADERS, disable_numparse=True), ""]
    per_tag = render_tag_speedups(results)
    if per_tag:
        lines += ["## Stage speedups per tag (long-tail operators)", "", per_tag, ""]
    lines += render_fused(results)
    lines += render_sensitivity(document)
    lines += render_scaling(document)
    not_ok = [r for r in results if r["status"] != "ok"]
    if not_ok:
        lines += ["## Not benchmarked", ""]
        rows = [
            [
                _name(r),
                r["category"],
                r["status"],
                describe_inputs(r["inputs"]),
                r["reason"] or "",
            ]
            for r in not_ok
        ]
        lines += [
            markdown_table(rows, headers=("Operator", "Category", "Status", "Inputs", "Reason")),
            "",
        ]
    return "\n".join(lines) + "\n"
