"""CSV rendering: one row per (operator, input configuration), statistics flattened into columns."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from opperf.results.record import PHASES, Record, read_records
from opperf.utils.cells import inert_csv_cell

COLUMNS = (
    "n",
    "median_s",
    "mean_s",
    "min_s",
    "max_s",
    "stdev_s",
    "iqr_s",
    "p90_s",
    "p99_s",
    "iqr_ratio",
    "noisy",
)


SHOWN_DIGITS = 10
"""Significant digits a CSV cell keeps: every figure of the results document, without float noise."""


def _shown(value: object) -> object:
    """A cell's value: a float to ``SHOWN_DIGITS``, text never read as a formula (``utils.cells``)."""
    return float(f"{value:.{SHOWN_DIGITS}g}") if isinstance(value, float) else inert_csv_cell(value)


def render_csv(document: dict[str, Any]) -> str:
    """One row per record, read once (``results.record``): its identity and status, each phase's
    summary statistics as the results file states them, and the settings and figures reports show."""
    pairs = zip(read_records(document), document["results"], strict=True)
    rows = [_row(record, found) for record, found in pairs]
    return pd.DataFrame(rows).to_csv(index=False)


def _row(record: Record, found: Mapping[str, Any]) -> dict[str, object]:
    """``record``'s row; its phases' statistics are ``found``'s (the record as the file has it), not
    recomputed from its samples, which the file rounds to a tenth of a nanosecond: a figure recomputed
    from them can differ from the file's in its last digit."""
    check = record.stage_check
    row: dict[str, object] = {
        "framework": record.framework,
        "namespace": record.namespace,
        "op": record.op,
        "function": record.function,
        "category": record.category,
        "status": record.status,
        "reason": record.reason,
        "memory_peak_bytes": record.memory_bytes,
        "inputs": json.dumps(json.loads(record.key.inputs), sort_keys=True),  # spaced, as it always was
    }
    for name in PHASES:
        block = found.get(name) or {}
        row.update({f"{name}_{column}": block.get(column) for column in COLUMNS})
    row["timer"] = record.timer
    row.update({f"host_{name}_median_s": record.host_medians.get(name) for name in PHASES})
    row.update(
        warmup_runs=record.warmup_runs,
        stop_reason=record.stop_reason,
        met_target=record.met_target,
        competing_load=record.competing_load,
        bytes=record.bytes_moved,
        flops=record.flops,
        gb_per_s=record.gb_per_s,
        gflop_per_s=record.gflop_per_s,
        fraction_of_roof=record.of_roof,
        flags=" ".join(record.flags),
        threads=record.threads,
        stage=record.stage,
        variant=record.variant,
        compile_s=record.compile_s,
        stage_agrees=check.agrees if check else None,
        stage_max_abs_diff=check.max_abs_diff if check else None,
        fused=check.fused if check else None,
    )
    return {key: _shown(value) for key, value in row.items()}
