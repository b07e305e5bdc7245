"""Plots of the HTML report's views over records other commands add: a model's time share, stage
speedups per configuration and per DLOP-Bench tag, thread scaling against the ideal line, and shape
sensitivity (time per element against element count). Inline SVG through ``charts.to_svg``; each
returns "" when it has nothing to draw.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from opperf.report.charts import PURPOSE, WIDTH, _short, pyplot, to_svg
from opperf.report.extras import require
from opperf.report.scaling import Scaling
from opperf.report.sensitivity import Point
from opperf.report.stages import TagStage
from opperf.results.model_report import ModelReport

SERIES_COLOURS = {
    "mxnet graph": "#4C78A8", "mxnet compile": "#9ECAE9", "mxnet fused": "#72B7B2",
    "torch graph": "#F58518", "torch compile": "#54A24B", "torch fused": "#B279A2",
}  # fmt: skip
"""A fixed colour per framework and stage, so the stage and the tag plots agree; others grey."""


def _series_colour(name: str) -> str:
    return SERIES_COLOURS.get(name, "#999999")


MODEL_OPERATORS = 15
"""Operators a model's share plot shows; the rest are summed into one bar."""


def _speedup_axis(axes, values: Sequence[float]) -> None:
    """A log x axis centred on 1, wide enough for ``values``, with 1 drawn."""
    low, high = min([*values, 1.0]), max([*values, 1.0])
    axes.set_xscale("log")
    axes.set_xlim(low / 2, high * 2.5)
    axes.axvline(1, color="black", linewidth=0.8)
    ticker = require("matplotlib.ticker", "plot", PURPOSE)
    axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axes.xaxis.set_minor_formatter(ticker.NullFormatter())


def model_share(report: ModelReport) -> str:
    """Each operator's share of the model: in-model (the framework's profiler) beside standalone
    (replayed configurations' medians times calls), largest in-model first, ratio written beside."""
    operators = [r for r in report.operators if r.in_model_s or r.standalone_s]
    if not operators:
        return ""
    shown = operators[:MODEL_OPERATORS]
    labels = [r.op for r in shown]
    in_model = [r.in_model_share * 100 for r in shown]
    standalone = [(r.standalone_share or 0.0) * 100 for r in shown]
    ratios = [r.ratio for r in shown]
    rest = operators[MODEL_OPERATORS:]
    if rest:
        labels.append(f"{len(rest)} others")
        in_model.append(sum(r.in_model_share for r in rest) * 100)
        standalone.append(sum(r.standalone_share or 0.0 for r in rest) * 100)
        ratios.append(None)
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.9 + 0.32 * len(labels)))
    positions = list(reversed(range(len(labels))))
    axes.barh([y + 0.2 for y in positions], in_model, height=0.4, color="#4C78A8", label="in-model")
    axes.barh([y - 0.2 for y in positions], standalone, height=0.4, color="#F58518", label="standalone")
    for y, ratio, length in zip(positions, ratios, map(max, in_model, standalone), strict=True):
        if ratio is not None:
            axes.annotate(f"x{ratio:.2f}", (length + 1, y), va="center", fontsize=7)
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set_xlim(0, max(*in_model, *standalone) * 1.18)
    axes.set_xlabel("share of the operators' time (%); xratio = standalone / in-model")
    axes.legend(loc="lower right", fontsize=8)
    return to_svg(figure)


def stage_speedups(items: Sequence[tuple[str, str, float]]) -> str:
    """Horizontal bars of speedup over eager, one per (configuration label, series, speedup), on a
    log scale around 1 (right of the line: faster than eager), a colour per series (a framework's
    stage: "mxnet graph")."""
    if not items:
        return ""
    ordered = sorted(items, key=lambda item: item[2])
    names = sorted({name for _, name, _ in ordered})
    colour = {name: _series_colour(name) for name in names}
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.9 + 0.24 * len(ordered)))
    colours = [colour[name] for _, name, _ in ordered]
    axes.barh(range(len(ordered)), [s - 1 for _, _, s in ordered], left=1, height=0.7, color=colours)
    axes.set_yticks(range(len(ordered)), [_short(label, 80) for label, _, _ in ordered])
    axes.tick_params(axis="y", labelsize=7)
    _speedup_axis(axes, [s for _, _, s in ordered])
    axes.set_xlabel("speedup over eager (eager forward median / stage's)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names]
    axes.legend(handles, names, loc="lower right", fontsize=7)
    return to_svg(figure)


def tag_speedups(series: Sequence[tuple[str, TagStage]]) -> str:
    """Per DLOP-Bench tag, the geometric-mean speedup over eager of each series (a framework's stage:
    "torch graph"); beside each bar how many configurations were measured and how many the stage
    could not take."""
    if not series:
        return ""
    tags = list(dict.fromkeys(f.tag for _, f in series))
    names = sorted({name for name, _ in series})
    colour = {name: _series_colour(name) for name in names}
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 0.9 + 0.22 * len(tags) * (len(names) + 1)))
    height = 0.8 / len(names)
    by_key = {(f.tag, name): f for name, f in series}
    measured = [f.speedup for _, f in series if f.speedup is not None]
    for row, tag in enumerate(reversed(tags)):
        for index, name in enumerate(names):
            found = by_key.get((tag, name))
            if found is None:
                continue
            y = row + (len(names) - 1) / 2 * height - index * height
            note = f"{found.measured} measured" + (
                f", {found.not_measured} not taken" if found.not_measured else ""
            )
            if found.speedup is None:
                axes.annotate(f"{name}: none measured ({note})", (1.05, y), va="center", fontsize=7)
                continue
            axes.barh(y, found.speedup - 1, left=1, height=height * 0.9, color=colour[name])
            axes.annotate(
                f"x{found.speedup:.2f} ({note})", (max(found.speedup, 1) * 1.08, y), va="center", fontsize=7
            )
    axes.set_yticks(range(len(tags)), list(reversed(tags)))
    axes.set_ylim(-0.6, len(tags) - 0.4)
    _speedup_axis(axes, measured or [1.0])
    axes.set_xlim(right=max([*measured, 1.0]) * 8)
    axes.set_xlabel("geometric-mean speedup over eager of the tag's long-tail configurations")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names]
    axes.legend(handles, names, loc="lower right", fontsize=7)
    return to_svg(figure)


def thread_scaling(found: Sequence[Scaling]) -> str:
    """Speedup over the fewest threads against the thread count, one grey line per configuration, the
    median in red and the ideal (linear) dashed; a configuration with a figure measured while another
    process was busy is drawn dotted and left out of the median."""
    if not found:
        return ""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 4))
    by_count: dict[int, list[float]] = defaultdict(list)
    busy_drawn = False
    for scaling in found:
        base = scaling.figures[0]
        points = [(f.threads, base.median_s / f.median_s) for f in scaling.figures if f.median_s > 0]
        busy = any(f.busy for f in scaling.figures)
        style = {"color": "#F2A541", "linestyle": ":", "alpha": 0.6} if busy else {"color": "#777777"}
        axes.plot(
            *zip(*points, strict=True),
            linewidth=0.9,
            marker=".",
            label="busy machine (not in the median)" if busy and not busy_drawn else None,
            **{"alpha": 0.5, **style},
        )
        busy_drawn = busy_drawn or busy
        if not busy:
            for threads, speedup in points:
                by_count[threads].append(speedup)
    counts = sorted({f.threads for s in found for f in s.figures})
    if by_count:
        measured = sorted(by_count)
        medians = [statistics.median(by_count[c]) for c in measured]
        axes.plot(measured, medians, color="#E45756", linewidth=2.5, marker="o", label="median")
    axes.plot(counts, [c / counts[0] for c in counts], color="black", linestyle="--", label="ideal (linear)")
    axes.set_yscale("log")
    ticker = require("matplotlib.ticker", "plot", PURPOSE)
    axes.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axes.set_xticks(counts, [str(c) for c in counts])
    axes.set_xlabel("intra-op threads")
    axes.set_ylabel(f"speedup over {counts[0]} thread(s) (forward median)")
    axes.legend(fontsize=8)
    return to_svg(figure)


def sensitivity(points: Sequence[Point]) -> str:
    """Per operator, time per element (ns) against element count, both log: where a call's fixed
    cost stops dominating; hollow markers are strided (non-contiguous) inputs."""
    measured = [p for p in points if p.ns_per_element]
    if not measured:
        return ""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(WIDTH, 4.4))
    palette = plt.get_cmap("tab10").colors
    ops = sorted({p.op for p in measured})
    for index, op in enumerate(ops):
        mine = sorted((p for p in measured if p.op == op), key=lambda p: p.elements)
        colour = palette[index % len(palette)]
        axes.plot([p.elements for p in mine], [p.ns_per_element for p in mine], color=colour, label=op)
        for strided in (False, True):
            chosen = [p for p in mine if p.strided == strided]
            axes.scatter(
                [p.elements for p in chosen],
                [p.ns_per_element for p in chosen],
                s=22,
                facecolors="none" if strided else colour,
                edgecolors=colour,
                zorder=3,
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("elements in the largest input tensor")
    axes.set_ylabel("forward median per element (ns)")
    axes.legend(fontsize=7, ncol=2)
    return to_svg(figure)
