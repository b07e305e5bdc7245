"""``opperf publish``: a static dashboard over the history store, as files in a folder.

``index.html`` has one row per configuration and phase (latest median, change against the previous
run and against the best, a sparkline, the latest run's flags); ``ops/<operator>.html`` one history
chart per configuration (median line, 95% interval band, detected steps marked); ``regressions.html``
every detected step, the configurations still at a regressed level first. The stylesheet and the
table script are written once into the folder and linked, so pages stay small and the folder works
from ``file://`` or any web host. Charts are SVG written directly: no plotting library is needed.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from opperf.report.lines import history_chart, sparkline
from opperf.report.page import (
    ASSETS,
    Column,
    asset,
    cards,
    data_table,
    escape,
    flag_badges,
    note_paragraphs,
    number,
    page,
)
from opperf.utils.errors import OpperfError
from opperf.utils.files import UnwritableError, folder_beside, write_atomically
from opperf.verdicts.decide import DEFAULT_ALPHA
from opperf.verdicts.history.steps import MIN_HOLD, Step, steps_of
from opperf.verdicts.history.store import Series

PAGES = ("index.html", "regressions.html")
"""The dashboard's pages at its top, beside its assets and its folder of operator pages."""
OPERATOR_PAGES = "ops"

MS = 1e3


@dataclass(frozen=True)
class Entry:
    """One configuration's history with what the dashboard shows of it."""

    series: Series
    steps: tuple[Step, ...]
    page: str

    @property
    def medians(self) -> list[float]:
        return [p.median for p in self.series.points]

    @property
    def latest(self) -> float:
        return self.medians[-1]

    @property
    def change_previous(self) -> float | None:
        return self.latest / self.medians[-2] - 1 if len(self.medians) > 1 else None

    @property
    def change_best(self) -> float:
        return self.latest / min(self.medians) - 1

    @property
    def regressed(self) -> bool:
        """Its latest step is a step up: the configuration is at a slower level now."""
        return bool(self.steps) and self.steps[-1].regression


PAGE_NAME_CHARS = 100
"""The longest operator page name kept as it is; file systems allow 255 bytes."""


def page_name(series: Series) -> str:
    """The operator page a series belongs to, a file name safe on any host: the operator's name where
    it is safe and short, else its safe part cut short with a digest of the whole (so two names that
    read alike never share a page)."""
    key = series.key
    text = f"{key.framework}-{key.namespace}-{key.op}"
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", text)
    if safe != text or len(safe) > PAGE_NAME_CHARS or safe.startswith("."):
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        safe = f"{safe.lstrip('.')[:PAGE_NAME_CHARS]}-{digest}"
    return f"{OPERATOR_PAGES}/{safe}.html"


def entries(all_series: Sequence[Series], threshold: float, alpha: float = DEFAULT_ALPHA) -> list[Entry]:
    """Each series with its steps (judged over all of them, ``history.steps.steps_of``) and page."""
    steps = steps_of(all_series, threshold, alpha)
    return [Entry(s, tuple(found), page_name(s)) for s, found in zip(all_series, steps, strict=True)]


def _change(value: float | None) -> str:
    if value is None:
        return "—"
    css = "up" if value > 0 else "down"
    return f'<span class="{css}">{value:+.1%}</span>'


def _index(items: Sequence[Entry], runs: int, threshold: float, notes: str) -> str:
    columns: list[Column[Entry]] = [
        Column(
            "configuration",
            lambda e: f'<a href="{e.page}">{escape(e.series.label)}</a>',
            lambda e: e.series.label,
        ),
        Column("runs", lambda e: str(len(e.series.points)), lambda e: len(e.series.points), True),
        Column("latest ms", lambda e: number(e.latest * MS), lambda e: e.latest, True),
        Column("vs previous", lambda e: _change(e.change_previous), lambda e: e.change_previous, True),
        Column("vs best", lambda e: _change(e.change_best), lambda e: e.change_best, True),
        Column("history", lambda e: sparkline(e.medians)),
        Column("steps", lambda e: str(len(e.steps)), lambda e: len(e.steps), True),
        Column(
            "flags",
            lambda e: flag_badges(e.series.points[-1].flags),
            lambda e: " ".join(e.series.points[-1].flags),
        ),
    ]
    regressed = sum(e.regressed for e in items)
    summary = cards(
        [
            ("runs", runs),
            ("configurations", len(items)),
            ("at a regressed level", regressed),
            ("with a step", sum(bool(e.steps) for e in items)),
        ]
    )
    return (
        f'<h1>opperf dashboard</h1><nav class="toc"><a href="index.html">all configurations</a>'
        f'<a href="regressions.html">regressions ({regressed})</a></nav>{summary}'
        f'<p class="muted">Steps: level changes larger than ±{threshold:.0%} and the series\' own noise '
        f"that held for at least {MIN_HOLD} runs (opperf history detect).</p>{notes}"
        + data_table("configurations", columns, items, flagged=lambda e: bool(e.series.points[-1].flags))
    )


def _operator_page(items: Sequence[Entry]) -> str:
    key = items[0].series.key
    parts = [
        f'<nav class="toc"><a href="../index.html">all configurations</a>'
        f'<a href="../regressions.html">regressions</a></nav>'
        f"<h1>{escape(key.namespace)}.{escape(key.op)}</h1>"
    ]
    for entry in items:
        points = entry.series.points
        chart = history_chart(
            [p.median * MS for p in points],
            [p.low * MS for p in points],
            [p.high * MS for p in points],
            [p.started[5:16].replace("T", " ") for p in points],
            [(s.index, s.regression) for s in entry.steps],
        )
        steps = "; ".join(
            f"{'slower' if s.regression else 'faster'} x{s.ratio:.3g} "
            f"at run {s.index + 1} ({points[s.index].source})"
            for s in entry.steps
        )
        parts.append(
            f"<h3>{escape(entry.series.label)}</h3><figure class=\"plot\">{chart}<figcaption>"
            f"median and 95% interval per run; dashed: detected steps. {escape(steps or 'no step')}"
            f"</figcaption></figure>"
        )
    return "".join(parts)


def _regressions(items: Sequence[Entry], notes: str) -> str:
    found = [(e, s) for e in items for s in e.steps]
    found.sort(key=lambda pair: (not (pair[0].regressed and pair[1] is pair[0].steps[-1]), -pair[1].ratio))
    columns: list[Column[tuple[Entry, Step]]] = [
        Column(
            "configuration",
            lambda p: f'<a href="{p[0].page}">{escape(p[0].series.label)}</a>',
            lambda p: p[0].series.label,
        ),
        Column("step", lambda p: "slower" if p[1].regression else "faster", lambda p: p[1].regression),
        Column("ratio", lambda p: f"x{p[1].ratio:.3g}", lambda p: p[1].ratio, True),
        Column("noise", lambda p: f"±{p[1].noise:.1%}", lambda p: p[1].noise, True),
        Column(
            "at run",
            lambda p: escape(
                f"{p[0].series.points[p[1].index].started[:19]} ({p[0].series.points[p[1].index].source})"
            ),
        ),
        Column("current level", lambda p: "yes" if p[1] is p[0].steps[-1] else "no"),
    ]
    return (
        '<nav class="toc"><a href="index.html">all configurations</a></nav>'
        "<h1>Regressions and other steps</h1>"
        f"<p>{len(found)} steps; configurations still at a slower level are listed first.</p>{notes}"
        + data_table("steps", columns, found)
    )


def publish(
    all_series: Sequence[Series],
    runs: int,
    out: Path,
    threshold: float,
    alpha: float = DEFAULT_ALPHA,
    progress: Callable[[int, int], None] | None = None,
    notes: Sequence[str] = (),
) -> list[Path]:
    """Write the dashboard into ``out``; the paths written; ``notes`` (``history.notes``) head its
    index and regressions pages. The pages are written into a new folder
    beside ``out`` that then takes its place, so a publish stopped part way (or failing on a full disk)
    leaves the previous dashboard whole, never an index linking to pages not written. ``progress`` is
    called with the files written so far and their total after each."""
    check_replaceable(out)
    items = sorted(entries(all_series, threshold, alpha), key=lambda e: e.series.label)
    out = out.resolve()
    staging = folder_beside(out, "new")
    try:
        names = _write_pages(items, runs, threshold, staging, progress, notes)
        _swap_in(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in names]


LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
"""What a desktop's file browser leaves in a folder it opened: no file of the user's."""


def check_replaceable(out: Path) -> None:
    """OpperfError unless ``out`` is absent or a folder holding nothing but what a dashboard writes
    (its pages, assets and operator pages, and a file browser's litter): a publish replaces the folder
    whole, and ``--out .`` once took the history database and the user's files with it."""
    if not out.exists():
        return
    if not out.is_dir():
        raise OpperfError(f"{out} is a file; name a folder for the dashboard")
    own = {*PAGES, *ASSETS, OPERATOR_PAGES, *LITTER}
    held = sorted(entry.name for entry in out.iterdir() if entry.name not in own)
    pages = out / OPERATOR_PAGES
    if pages.is_dir():
        held += sorted(
            f"{OPERATOR_PAGES}/{entry.name}"
            for entry in pages.iterdir()
            if entry.name not in LITTER and not (entry.suffix == ".html" and entry.is_file())
        )
    elif pages.exists():
        held.append(OPERATOR_PAGES)
    if held:
        shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        raise OpperfError(
            f"{out} holds files of its own ({shown}), and a publish replaces the folder whole; name a new "
            "or empty folder, or an earlier dashboard's"
        )


def _write_pages(
    items: Sequence[Entry],
    runs: int,
    threshold: float,
    folder: Path,
    progress: Callable[[int, int], None] | None,
    notes: Sequence[str],
) -> list[str]:
    """Every file of the dashboard written into ``folder``; their names."""
    written: list[str] = []
    by_page: dict[str, list[Entry]] = defaultdict(list)
    for entry in items:
        by_page[entry.page].append(entry)
    total = len(ASSETS) + len(PAGES) + len(by_page)

    def write(name: str, text: str) -> None:
        write_atomically(folder / name, text)
        written.append(name)
        if progress is not None:
            progress(len(written), total)

    for name in ASSETS:
        write(name, asset(name))
    said = note_paragraphs(notes, lead="Note: ")
    index = _index(items, runs, threshold, said)
    write("index.html", page("opperf dashboard", index, inline_assets=False))
    write("regressions.html", page("opperf regressions", _regressions(items, said), inline_assets=False))
    for name, group in by_page.items():
        title = f"opperf: {group[0].series.key.name}"
        write(name, page(title, _operator_page(group), inline_assets=False, prefix="../"))
    return written


def _swap_in(staging: Path, out: Path) -> None:
    """Put the finished ``staging`` folder where ``out`` is: the old dashboard moves aside first and is
    removed only once the new one is in place."""
    retired = None
    try:
        if out.exists():
            retired = folder_beside(out, "old")
            out.rename(retired / "dashboard")
        staging.rename(out)
    except OSError as error:
        if retired is not None and not out.exists():
            (retired / "dashboard").rename(out)
        raise UnwritableError(out, error.strerror or str(error)) from None
    finally:
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
