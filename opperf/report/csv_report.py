"""CSV rendering: one row per (operator, input configuration), statistics flattened into columns."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

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
ROOFLINE_COLUMNS = ("bytes", "flops", "gb_per_s", "gflop_per_s")


SHOWN_DIGITS = 10
"""Significant digits a CSV cell keeps: every figure of the results document, without float noise."""


def _shown(value: object) -> object:
    """A cell's value: a float to ``SHOWN_DIGITS``, text never read as a formula (``utils.cells``)."""
    return float(f"{value:.{SHOWN_DIGITS}g}") if isinstance(value, float) else inert_csv_cell(value)


def render_csv(document: dict[str, Any]) -> str:
    rows = []
    for result in document["results"]:
        row = {
            key: result[key]
            for key in (
                "framework",
                "namespace",
                "op",
                "function",
                "category",
                "status",
                "reason",
                "memory_peak_bytes",
            )
        }
        row["inputs"] = json.dumps(result["inputs"], sort_keys=True)
        for phase in ("forward", "backward"):
            block = result[phase] or {}
            for column in COLUMNS:
                row[f"{phase}_{column}"] = block.get(column)
        row["timer"] = result.get("timer")
        latency = result.get("host_latency") or {}
        for phase in ("forward", "backward"):
            row[f"host_{phase}_median_s"] = (latency.get(phase) or {}).get("median_s")
        sampling = result.get("sampling") or {}
        row.update({key: sampling.get(key) for key in ("warmup_runs", "stop_reason", "met_target")})
        row["competing_load"] = result.get("competing_load")
        roofline = result.get("roofline") or {}
        row.update({key: roofline.get(key) for key in ROOFLINE_COLUMNS})
        row["fraction_of_roof"] = (roofline.get("fraction_of_peak") or {}).get("of_roof")
        row["flags"] = " ".join(result.get("flags") or ())
        row.update({key: result.get(key) for key in ("threads", "stage", "variant", "compile_s")})
        check = result.get("stage_check") or {}
        row["stage_agrees"] = check.get("agrees")
        row["stage_max_abs_diff"] = check.get("max_abs_diff")
        row["fused"] = check.get("fused")
        rows.append({key: _shown(value) for key, value in row.items()})
    return pd.DataFrame(rows).to_csv(index=False)
