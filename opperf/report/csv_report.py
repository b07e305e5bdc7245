"""CSV rendering: one row per (operator, input configuration), statistics flattened into columns."""

from __future__ import annotations

import json

import pandas as pd

COLUMNS = ("n", "median_s", "mean_s", "min_s", "max_s", "stdev_s", "iqr_s")


def render_csv(document: dict[str, object]) -> str:
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
        rows.append(row)
    return pd.DataFrame(rows).to_csv(index=False)
