"""A diff as CSV: one line per row, the JSON row's figures flattened."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from opperf.utils.cells import inert_csv_cell
from opperf.verdicts.diff import Diff
from opperf.verdicts.document import row_dict

COLUMNS = (
    "framework", "namespace", "op", "inputs", "dtype", "device", "profiler", "mode", "threads", "cache",
    "run_backward", "stage", "variant", "phase", "verdict", "indicative", "base_status", "base_runs",
    "base_median_s", "base_ci95_low_s", "base_ci95_high_s", "new_status", "new_runs", "new_median_s",
    "new_ci95_low_s", "new_ci95_high_s", "ratio", "ratio_ci95_low", "ratio_ci95_high", "noise", "p", "q",
    "reason",
)  # fmt: skip


def flat_row(row: dict[str, Any]) -> dict[str, object]:
    flat = {name: row.get(name) for name in COLUMNS}
    flat["inputs"] = json.dumps(row["inputs"], separators=(",", ":"))
    for name in ("base", "new"):
        block = row[name] or {}
        interval = block.get("median_ci95_s") or [None, None]
        flat.update(
            {
                f"{name}_status": block.get("status"),
                f"{name}_runs": block.get("runs"),
                f"{name}_median_s": block.get("median_s"),
                f"{name}_ci95_low_s": interval[0],
                f"{name}_ci95_high_s": interval[1],
            }
        )
    flat["ratio_ci95_low"], flat["ratio_ci95_high"] = row["ratio_ci95"] or (None, None)
    return flat


def render_csv(diff: Diff) -> str:
    output = io.StringIO()
    writer = csv.DictWriter(output, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in diff.rows:
        writer.writerow({name: inert_csv_cell(value) for name, value in flat_row(row_dict(row)).items()})
    return output.getvalue()
