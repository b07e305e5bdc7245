"""A diff as plain data: the JSON file other tools read (DESIGN.md "Files other tools read"), and
the one place typed values become dicts. Numbers are rounded to what they can claim: times and
ratios to 4 significant digits, p and q to 3."""

from __future__ import annotations

import json
import math
from typing import Any

from opperf.results.key import SETTINGS
from opperf.verdicts.diff import Diff, Row, Side, Summary

DIFF_FORMAT_VERSION = 1


def significant(value: float | None, digits: int = 4) -> float | None:
    """``value`` rounded to ``digits`` significant digits (None and non-finite values pass through
    as None, since JSON has no infinity)."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def side_block(status: str | None, figures: Side | None, paired: bool = False) -> dict[str, object] | None:
    """A side of a row: its status, and where it was measured its figures; ``compared_s`` is the
    figure the row's ratio compares (``Side.compared``)."""
    if status is None:
        return None
    block: dict[str, Any] = {"status": status}
    if figures is not None:
        block.update(
            runs=figures.runs,
            compared_s=significant(figures.compared(paired)),
            median_s=significant(figures.median),
            median_ci95_s=[significant(figures.low), significant(figures.high)],
            run_medians_s=[significant(m) for m in figures.run_medians],
            noisy=figures.noisy,
            imprecise=figures.imprecise,
            busy=figures.busy,
        )
    return block


def row_dict(row: Row) -> dict[str, object]:
    key = row.key
    return {
        "framework": key.framework,
        "namespace": key.namespace,
        "op": key.op,
        "inputs": json.loads(key.inputs),
        **dict(zip(SETTINGS, key.settings, strict=True)),
        "phase": row.phase,
        "verdict": row.verdict.value,
        "indicative": row.indicative,
        "base": side_block(row.base_status, row.base, row.paired),
        "new": side_block(row.new_status, row.new, row.paired),
        "ratio": significant(row.ratio),
        "ratio_ci95": [significant(row.ratio_low), significant(row.ratio_high)]
        if row.ratio_low is not None
        else None,
        "noise": significant(row.noise, 3),
        "p": significant(row.p, 3),
        "q": significant(row.q, 3),
        "reason": row.reason,
    }


def summary_dict(summary: Summary) -> dict[str, object]:
    model = summary.model
    return {
        "counts": {verdict.value: count for verdict, count in summary.counts},
        "runs": {"base": len(summary.base_files), "new": len(summary.new_files)},
        "files": {"base": list(summary.base_files), "new": list(summary.new_files)},
        "indicative": summary.indicative,
        "compared_rows": summary.compared,
        "geomean_ratio": significant(summary.geomean),
        "geomean_ci95": [significant(summary.geomean_low), significant(summary.geomean_high)],
        "machine_factor": significant(summary.machine_factor),
        "machine_shift": summary.machine_shift,
        "notes": list(summary.notes),
        "said": list(summary.said),
        "threshold": summary.threshold,
        "alpha": summary.alpha,
        "noise_model": None
        if model is None
        else {
            "rows": model.rows,
            "centre_ratio": significant(math.exp(model.centre)),
            "null": None
            if model.null is None
            else {"scale": significant(math.sqrt(model.null.s2), 3), "df": significant(model.null.df, 3)},
            "standardised_null_scale": None
            if model.standardised is None
            else significant(math.sqrt(model.standardised.s2), 3),
            "variance_prior": None
            if model.prior is None
            else {"s2": significant(model.prior.s2, 3), "df": significant(model.prior.df, 3)},
        },
    }


def diff_document(diff: Diff) -> dict[str, object]:
    return {
        "diff_format_version": DIFF_FORMAT_VERSION,
        "summary": summary_dict(diff.summary),
        "rows": [row_dict(row) for row in diff.rows],
    }


def render_json(diff: Diff) -> str:
    return json.dumps(diff_document(diff), indent=1, allow_nan=False) + "\n"
