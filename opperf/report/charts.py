"""The HTML report's plots: matplotlib figures rendered to inline SVG text (no script, no network).

Each function takes typed rows and returns one ``<svg>`` element, or "" when it has nothing to draw.
matplotlib comes from the ``opperf[plot]`` extra and is imported on first use, with the Agg backend
so no display is needed.
"""

from __future__ import annotations

import io
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

from opperf.report.extras import require
from opperf.results.record import Phase, Record
from opperf.results.rows import MS, Group

PURPOSE = "opperf report --html"
WIDTH = 9.0
"""Figure width in inches (at 72 points an inch, about the page's column)."""
_SVG_START = re.compile(r"^.*?(<svg)", re.DOTALL)


def pyplot():
    """matplotlib's pyplot on the Agg backend, or OpperfError naming ``opperf[plot]``."""
    matplotlib = require("matplotlib", "plot", PURPOSE)
    matplotlib.use("Agg")
    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",
            "font.size": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.hashsalt": "opperf",
            # Labels are operator names from result files: "$" is text, never mathtext to parse.
            "text.parse_math": False,
        }
    )
    return require("matplotlib.pyplot", "plot", PURPOSE)


def to_svg(figure) -> str:
    """The figure as an ``<svg>`` element (the XML prologue and DOCTYPE dropped), then closed."""
    plt = pyplot()
    buffer = io.StringIO()
    with warnings.catch_warnings():
        # An operator name in a script DejaVu lacks (CJK, emoji) is laid out with a box's width, and
        # the page's browser draws it from its own fonts (svg.fonttype none: labels stay text).
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    return _SVG_START.sub(r"\1", buffer.getvalue(), count=1)


def category_colours(categories: Iterable[str]) -> dict[str, object]:
    """One colour per category, stable for a given set of categories."""
    plt = pyplot()
    palette = plt.get_cmap("tab20").colors
    return {category: palette[index % len(palette)] for index, category in enumerate(sorted(categories))}


def time_by(rows: Sequence[Record], groups: Callable[[Record], Iterable[str]], what: str) -> str:
    """Horizontal bars: each group's summed forward and backward medians (ms), the slowest on top;
    ``groups`` names the groups a row counts in (its category; each of its tags)."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for row in rows:
        for group in groups(row):
            totals[group][0] += row.forward.median * MS if row.forward else 0.0
            totals[group][1] += row.backward.median * MS if row.backward else 0.0
    if not totals:
        return ""
    ordered = sorted(totals, key=lambda c: sum(totals[c]))
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.8 + 0.3 * len(ordered)))
    positions = range(len(ordered))
    # Side by side, not stacked: on a log scale a stacked segment's length misstates its share.
    axes.barh(
        [y + 0.2 for y in positions],
        [totals[c][0] for c in ordered],
        height=0.4,
        color="#4C78A8",
        label="forward",
    )
    if any(totals[c][1] for c in ordered):  # a sweep with --no-backward has no backward bars
        axes.barh(
            [y - 0.2 for y in positions],
            [totals[c][1] for c in ordered],
            height=0.4,
            color="#F58518",
            label="backward",
        )
    axes.set_yticks(list(positions), ordered)
    sums = [v for c in ordered for v in totals[c] if v > 0]
    if sums and max(sums) > 100 * min(sums):
        axes.set_xscale("log")
    axes.set_xlabel(f"summed median time per {what} (ms)")
    axes.legend(loc="lower right")
    return to_svg(figure)


def roofline(rows: Sequence[Record], peaks: Mapping[str, float] | None) -> str:
    """Arithmetic intensity against achieved GFLOP/s, a colour per category, with the machine's
    bandwidth and compute roofs drawn when the file records its peaks."""
    points = [r for r in rows if r.intensity and r.gflop_per_s]
    if not points:
        return ""
    plt = pyplot()
    colours = category_colours({r.category for r in points})
    figure, axes = plt.subplots(figsize=(WIDTH, 5.2))
    for category, colour in colours.items():
        mine = [r for r in points if r.category == category]
        axes.scatter(
            [r.intensity for r in mine], [r.gflop_per_s for r in mine], s=14, color=colour, label=category
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    if peaks:
        bandwidth = peaks["bandwidth_bytes_per_s"] / 1e9
        compute = peaks["gemm_flops_per_s"] / 1e9
        ridge = compute / bandwidth
        intensities = [cast(float, r.intensity) for r in points]
        low = min(ridge, *intensities) / 4
        high = max(ridge, *intensities) * 4
        axes.plot([low, ridge], [bandwidth * low, compute], color="black", linewidth=1.2)
        axes.plot([ridge, high], [compute, compute], color="black", linewidth=1.2)
        axes.annotate(f"memory roof {bandwidth:.3g} GB/s", (low * 1.3, bandwidth * low * 1.6), fontsize=8)
        axes.annotate(f"compute roof {compute:.3g} GFLOP/s", (ridge * 1.2, compute * 1.15), fontsize=8)
        axes.set_ylim(top=compute * 3)
    axes.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    axes.set_ylabel("achieved GFLOP/s (forward median)")
    axes.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0), markerscale=1.5)
    return to_svg(figure)


def distributions(rows: Sequence[Record], title: str) -> str:
    """Box plots of the forward samples (ms, log scale) of ``rows``, one line each, with every sample
    drawn as a dot so short runs show what they measured."""
    # The first row on top; samples of zero (a timer's resolution) have no place on a log scale.
    rows = [r for r in reversed(rows) if r.forward and any(s > 0 for s in r.forward.samples)]
    if not rows:
        return ""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.8 + 0.24 * len(rows)))
    data = [[s * MS for s in cast(Phase, r.forward).samples if s > 0] for r in rows]
    axes.boxplot(
        data, orientation="horizontal", widths=0.6, showfliers=False, medianprops={"color": "#E45756"}
    )
    for position, samples in enumerate(data, start=1):
        axes.scatter(samples, [position] * len(samples), s=4, color="#4C78A8", alpha=0.5, zorder=3)
    axes.set_yticks(range(1, len(rows) + 1), [_short(r.label) for r in rows], fontsize=7)
    axes.set_xscale("log")
    axes.set_xlabel("forward time per call (ms)")
    axes.set_title(title, fontsize=9)
    return to_svg(figure)


NAMESPACE_COLOURS = ("#4C78A8", "#F58518", "#54A24B", "#B279A2", "#9D755D")


def comparison(groups: Sequence[Group]) -> str:
    """Per configuration, a bar per namespace (forward median, log scale), each namespace after the
    first with its ratio to the first written beside it."""
    if not groups:
        return ""
    namespaces = sorted({n for g in groups for n in g.names})
    colour = dict(zip(namespaces, NAMESPACE_COLOURS * len(namespaces), strict=False))
    height = 0.8 / len(namespaces)
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.9 + 0.16 * len(groups) * (len(namespaces) + 1)))
    longest = max(cast(Phase, r.forward).median * MS for g in groups for r in g.rows)
    for position, group in enumerate(reversed(groups)):
        for index, namespace in enumerate(namespaces):
            row = group.by_namespace(namespace)
            if row is None:
                continue
            y = position + (len(namespaces) - 1) / 2 * height - index * height
            length = cast(Phase, row.forward).median * MS
            axes.barh(y, length, height=height * 0.9, color=colour[namespace])
            if row is not group.first:
                axes.annotate(f"x{group.ratio(row):.2f}", (length * 1.15, y), va="center", fontsize=6.5)
    axes.set_yticks(range(len(groups)), [_short(g.label, 60) for g in reversed(groups)], fontsize=7)
    axes.set_xscale("log")
    axes.set_xlim(right=longest * 4)
    axes.set_xlabel("forward median (ms); xratio = the namespace's over the first's")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in namespaces]
    axes.legend(handles, namespaces, loc="lower right", fontsize=7)
    return to_svg(figure)


def waterfall(ratios: Sequence[tuple[float, str]], threshold: float) -> str:
    """Every diff row's ratio (new / base), sorted, on a log scale: the ``threshold`` band shaded,
    slower rows red, faster green, same blue, inconclusive grey."""
    if not ratios:
        return ""
    colour = {"slower": "#E45756", "faster": "#54A24B", "same": "#4C78A8"}
    ordered = sorted(ratios)
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 4.2))
    axes.axhspan(1 / (1 + threshold), 1 + threshold, color="#F2CF5B", alpha=0.35, label=f"±{threshold:.0%}")
    axes.bar(
        range(len(ordered)),
        [r - 1 for r, _ in ordered],
        bottom=1,
        width=1.0,
        color=[colour.get(verdict, "#BBBBBB") for _, verdict in ordered],
    )
    axes.axhline(1, color="black", linewidth=0.8)
    axes.set_yscale("log")
    plain = require("matplotlib.ticker", "plot", PURPOSE).FuncFormatter(lambda value, _: f"{value:g}")
    axes.yaxis.set_major_formatter(plain)
    axes.yaxis.set_minor_formatter(plain)
    axes.set_xlim(-0.5, len(ordered) - 0.5)
    axes.set_xlabel(f"{len(ordered)} rows, sorted by ratio")
    axes.set_ylabel("ratio new / base (log)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in (*colour.values(), "#BBBBBB")]
    axes.legend(
        [*handles, axes.patches[0]], [*colour, "inconclusive / other", f"±{threshold:.0%} band"], fontsize=7
    )
    return to_svg(figure)


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
