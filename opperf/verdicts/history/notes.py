"""What a reader of a history's steps must know beside them, as ``history detect`` prints it and the
dashboard shows it: where the machine factor itself stepped (a change most configurations shared,
taken out as the machine's), and which runs measured too few configurations for a factor at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opperf.utils.markdown_table import printable
from opperf.utils.words import counted
from opperf.verdicts.history.steps import MIN_FACTOR_OPERATORS, factorless_runs_of, shared_steps_of
from opperf.verdicts.history.store import Series, StoredRun


def machine_notes(series: Sequence[Series], runs: Mapping[int, StoredRun], threshold: float) -> list[str]:
    """The notes on a store's series (``runs`` by id): a step of the machine factor names its run and
    ratio; runs without a factor are counted, with what that means for their steps."""
    said = [
        f"from run {runs[run].started[:19]} ({printable(runs[run].source)}) most configurations moved "
        f"x{step.ratio:.3g} together: read as the machine's (a slower machine, a busy stretch), no "
        "configuration's step; if the build changed there, compare those runs with `opperf diff`"
        for run, step in shared_steps_of(series, threshold)
    ]
    factorless = factorless_runs_of(series)
    if factorless:
        said.append(
            f"{counted(len(factorless), 'run')} of {len(runs)} measured fewer than {MIN_FACTOR_OPERATORS} "
            "operators, too few to tell the machine's pace from the code's: their times are judged as "
            "measured, so a slow stretch of the machine there can read as a step"
        )
    return said
