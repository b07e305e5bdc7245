"""The coverage table: per category, operators benchmarked, skipped and failed, then every reason."""

from __future__ import annotations

from tabulate import tabulate

from opperf.report.document import STATUS_KEYS


def render_coverage(coverage: dict[str, object]) -> str:
    rows = [
        [category, counts["operators"], *(counts[key] for key in STATUS_KEYS)]
        for category, counts in coverage["by_category"].items()
    ]
    rows.append(["total", coverage["operators"], *(coverage[key] for key in STATUS_KEYS)])
    lines = [
        f"{coverage['operators']} distinct operators of {coverage['registered']} registered names",
        tabulate(rows, headers=("category", "operators", *STATUS_KEYS), tablefmt="github"),
    ]
    for status in STATUS_KEYS[1:]:
        entries = [entry for entry in coverage["by_operator"] if entry["status"] == status]
        if entries:
            lines += ["", f"{status} ({len(entries)}):"]
            lines += [f"  {entry['op']}: {entry['reason']}" for entry in entries]
    return "\n".join(lines)
