"""Small SVG line charts written directly (no plotting library): the dashboard's sparklines and
history charts, thousands of which must render in seconds.

A history chart is one series of run medians with their 95% interval as a band and detected steps
marked; the y axis is linear from zero-ish to the top of the band, with a few round ticks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from opperf.report.page import escape


@dataclass(frozen=True)
class Frame:
    """A chart's pixel box and value ranges, mapping values to pixels."""

    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    count: int
    low: float
    high: float

    def x(self, index: int) -> float:
        span = self.width - self.left - self.right
        return self.left + (span * index / (self.count - 1) if self.count > 1 else span / 2)

    def y(self, value: float) -> float:
        span = self.height - self.top - self.bottom
        fraction = (value - self.low) / (self.high - self.low) if self.high > self.low else 0.5
        return self.height - self.bottom - span * fraction


def _path(points: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def sparkline(values: Sequence[float], width: int = 110, height: int = 22) -> str:
    """A tiny line of ``values`` with the last point dotted: the shape of a history at a glance."""
    if not values:
        return ""
    frame = Frame(width, height, 2, 4, 3, 3, len(values), min(values), max(values))
    points = [(frame.x(i), frame.y(v)) for i, v in enumerate(values)]
    last = points[-1]
    return (
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
        f'<polyline fill="none" stroke="#4C78A8" stroke-width="1.3" points="{_path(points)}"/>'
        f'<circle cx="{last[0]:.1f}" cy="{last[1]:.1f}" r="2" fill="#E45756"/></svg>'
    )


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round values between ``low`` and ``high``."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def history_chart(
    medians: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    labels: Sequence[str],
    steps: Sequence[tuple[int, bool]],
    unit: str = "ms",
) -> str:
    """Medians over runs as a line, their 95% intervals as a band, and each step (run index, whether
    it is a regression) as a vertical marker, red up and green down."""
    width, height = 640, 220
    low, high = min(lows), max(highs)
    pad = (high - low) * 0.08 or high * 0.05 or 1.0
    frame = Frame(width, height, 60, 40, 12, 42, len(medians), max(0.0, low - pad), high + pad)
    parts = [
        f'<svg class="history" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
    ]
    for tick in _ticks(frame.low, frame.high):
        y = frame.y(tick)
        parts.append(
            f'<line x1="{frame.left}" x2="{width - frame.right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{frame.left - 6}" y="{y + 3:.1f}" font-size="10" text-anchor="end">{tick:.4g}</text>'
        )
    band = [(frame.x(i), frame.y(v)) for i, v in enumerate(highs)]
    band += [(frame.x(i), frame.y(v)) for i, v in reversed(list(enumerate(lows)))]
    parts.append(f'<polygon fill="#4C78A8" fill-opacity="0.18" stroke="none" points="{_path(band)}"/>')
    for index, regression in steps:
        x = (frame.x(index - 1) + frame.x(index)) / 2
        colour = "#E45756" if regression else "#54A24B"
        parts.append(
            f'<line class="step" x1="{x:.1f}" x2="{x:.1f}" y1="{frame.top}" y2="{height - frame.bottom}" '
            f'stroke="{colour}" stroke-width="2" stroke-dasharray="5,3"/>'
        )
    line = [(frame.x(i), frame.y(v)) for i, v in enumerate(medians)]
    parts.append(f'<polyline fill="none" stroke="#1f4e79" stroke-width="1.6" points="{_path(line)}"/>')
    for (x, y), label, median in zip(line, labels, medians, strict=True):
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="#1f4e79"><title>{escape(label)}: '
            f"{median:.4g} {unit}</title></circle>"
        )
    every = max(1, math.ceil(len(labels) / 8))
    for index in range(0, len(labels), every):
        parts.append(
            f'<text x="{frame.x(index):.1f}" y="{height - frame.bottom + 14}" font-size="9" '
            f'text-anchor="middle">{escape(labels[index])}</text>'
        )
    parts.append(
        f'<text x="12" y="{frame.top + (height - frame.top - frame.bottom) / 2:.0f}" font-size="10" '
        f'transform="rotate(-90 12 {frame.top + (height - frame.top - frame.bottom) / 2:.0f})" '
        f'text-anchor="middle">median ({unit})</text></svg>'
    )
    return "".join(parts)
