"""Progress on a terminal: what a long-running subcommand is doing, on stderr.

Shown only where a person watches (stderr is a terminal) and not asked away with ``--quiet``
(``common.add_quiet``); a pipe or a CI log gets only the subcommand's closing summary. Each kind of
progress is a callable its loop reports to, closed (the line cleared) when the loop ends.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from opperf.results.measurement import Measurement


def wanted(arguments: argparse.Namespace) -> bool:
    """Whether to show progress: stderr is a terminal and ``--quiet`` was not given."""
    return sys.stderr.isatty() and not getattr(arguments, "quiet", False)


class _Bar:
    """A tqdm bar on stderr, imported only when shown."""

    def __init__(self, **settings: Any) -> None:
        from tqdm import tqdm

        self._bar = tqdm(file=sys.stderr, dynamic_ncols=True, **settings)

    def close(self) -> None:
        self._bar.close()


class SweepBar(_Bar):
    """A sweep's operators: done of total, the one running, the last one's statuses, time left."""

    def __init__(self) -> None:
        super().__init__(unit="op")
        self._last = ""

    def __call__(self, done: int, total: int, op: Any, results: Sequence[Measurement]) -> None:
        self._bar.total = total
        if results:
            self._last = f"{op.name} {'/'.join(sorted({m.status.value for m in results}))}"
            label = f"last: {self._last}"
        else:
            label = f"running {op.name}" + (f"; last: {self._last}" if self._last else "")
        self._bar.set_postfix_str(label, refresh=False)
        self._bar.update(done - self._bar.n)
        self._bar.refresh()

    @property
    def label(self) -> str:
        """What the bar says after the counts."""
        return self._bar.postfix or ""


class RoundsBar(_Bar):
    """An A/B job's pairs measured, the round, the configuration last measured."""

    def __init__(self) -> None:
        super().__init__(desc="ab", unit=" pairs", leave=False)

    def __call__(self, round_index: int, label: str) -> None:
        self._bar.set_postfix_str(f"round {round_index}: {label}", refresh=False)
        self._bar.update(1)


class CountBar(_Bar):
    """Items of a known count done so far (``publish``'s pages)."""

    def __init__(self, description: str, unit: str) -> None:
        super().__init__(desc=description, unit=f" {unit}", leave=False)

    def __call__(self, done: int, total: int) -> None:
        self._bar.total = total
        self._bar.update(done - self._bar.n)


class Stages:
    """One line naming the stage a subcommand is in ("model: profiling 10 passes of resnet18"),
    each stage replacing the last; nothing where progress is not ``shown``."""

    def __init__(self, command: str, shown: bool) -> None:
        self._command = command
        self._shown = shown
        self._written = False

    def __call__(self, stage: str) -> None:
        if self._shown:
            print(f"\r\x1b[K{self._command}: {stage} ...", end="", file=sys.stderr, flush=True)
            self._written = True

    def close(self) -> None:
        if self._written:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
            self._written = False
