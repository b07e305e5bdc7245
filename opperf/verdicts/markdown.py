"""A diff as Markdown: the summary, then a section per verdict worth reading; ``same`` rows are
counted, not listed."""

from __future__ import annotations

import json

from opperf.results.inputs import describe_inputs
from opperf.utils.markdown_table import markdown_table
from opperf.utils.words import counted
from opperf.verdicts.decide import Verdict
from opperf.verdicts.diff import Diff, Row, Summary
from opperf.verdicts.document import significant

SECTIONS = (
    (Verdict.SLOWER, "Slower"),
    (Verdict.NEWLY_FAILING, "Newly failing"),
    (Verdict.INCONCLUSIVE, "Inconclusive"),
    (Verdict.FASTER, "Faster"),
    (Verdict.FIXED, "Fixed"),
    (Verdict.NEW, "New"),
    (Verdict.GONE, "Gone"),
    (Verdict.INCOMPARABLE, "Incomparable"),
)
HEADERS = ("operator", "inputs", "phase", "base ms", "new ms", "ratio", "95% interval", "q", "note")


def _number(value: float | None, digits: int = 4) -> str:
    rounded = significant(value, digits)
    return "" if rounded is None else f"{rounded:g}"


def _ms(row: Row, name: str) -> str:
    """A side's figure the row's ratio compares, in ms (its status where it has none)."""
    figures = getattr(row, name)
    if figures is None:
        return getattr(row, f"{name}_status") or ""
    return _number(figures.compared(row.paired) * 1e3)


def table_row(row: Row) -> list[str]:
    interval = f"{_number(row.ratio_low)}-{_number(row.ratio_high)}" if row.ratio_low is not None else ""
    note = "; ".join(filter(None, ["indicative" if row.indicative else None, row.reason]))
    key = row.key
    where = key.qualifiers()
    return [
        key.name + (f" [{', '.join(where)}]" if where else ""),
        describe_inputs(json.loads(key.inputs)),
        row.phase,
        _ms(row, "base"),
        _ms(row, "new"),
        _number(row.ratio),
        interval,
        _number(row.q, 3),
        note,
    ]


def _sources(summary: Summary) -> list[str]:
    """What was compared, each file named once: an A/B file's rounds, or each side's files."""
    if summary.paired:
        files = ", ".join(dict.fromkeys(path.split(" [")[0] for path in summary.base_files))
        rounds = counted(len(summary.base_files), "round")
        return [f"A/B job {files}: up to {rounds} of base and new, interleaved."]
    return [
        f"Base: {counted(len(summary.base_files), 'run')} ({', '.join(summary.base_files)}); "
        f"new: {counted(len(summary.new_files), 'run')} ({', '.join(summary.new_files)})."
    ]


def summary_lines(summary: Summary) -> list[str]:
    counts = ", ".join(f"{count} {verdict.value}" for verdict, count in summary.counts if count)
    lines = [
        *_sources(summary),
        "",
        f"Rows: {counts or 'none'}. Threshold {summary.threshold:g}, FDR level {summary.alpha:g}.",
    ]
    if summary.geomean is not None:
        interval = ""
        if summary.geomean_low is not None:
            interval = f" (95% interval {_number(summary.geomean_low)}-{_number(summary.geomean_high)})"
        factor = (
            "" if summary.paired else f"; machine factor (median ratio): {_number(summary.machine_factor)}"
        )
        lines += [
            "",
            f"Geometric mean ratio new/base over {counted(summary.compared, 'row')}: "
            f"{_number(summary.geomean)}{interval}{factor}.",
        ]
    for note in summary.said:
        lines += ["", note]
    return lines


def render_markdown(diff: Diff) -> str:
    lines = ["# opperf diff", "", *summary_lines(diff.summary)]
    for verdict, title in SECTIONS:
        rows = [row for row in diff.rows if row.verdict is verdict]
        if rows:
            table = markdown_table([table_row(r) for r in rows], headers=HEADERS, disable_numparse=True)
            lines += ["", f"## {title} ({len(rows)})", "", table]
    same = sum(1 for row in diff.rows if row.verdict is Verdict.SAME)
    lines += [
        "",
        f"{counted(same, 'row')} {'is' if same == 1 else 'are'} the same within the threshold (not listed).",
    ]
    return "\n".join(lines) + "\n"
