"""The sweep's journal: one JSON line per finished operator, so a killed sweep loses only the operator
in flight, and ``--resume`` continues where it stopped.

The first line records the settings that make results comparable; resuming with other settings is
refused. Each later line holds one operator's records in the results-file format, written and synced
before the next operator starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO

from opperf.errors import OpperfError
from opperf.report.document import measurement_from_record, record
from opperf.results import Measurement

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Journal:
    """What an interrupted sweep had finished: per operator, its measurements."""

    settings: dict[str, object]
    finished: dict[str, tuple[Measurement, ...]]


def load_journal(path: str) -> Journal | None:
    """The journal at ``path``, or None if there is none. A torn last line (a kill mid-write) is ignored."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as journal:
        lines = journal.read().splitlines()
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            break
    if not entries or entries[0].get("journal") != FORMAT_VERSION:
        raise OpperfError(f"{path} is not an opperf sweep journal (version {FORMAT_VERSION}); remove it")
    finished = {
        entry["op"]: tuple(measurement_from_record(r) for r in entry["records"]) for entry in entries[1:]
    }
    return Journal(settings=entries[0]["settings"], finished=finished)


class JournalWriter:
    """Appends finished operators to the journal, each line flushed and synced to disk."""

    def __init__(self, path: str, settings: dict[str, object], *, append: bool) -> None:
        self._file: TextIO = open(path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        if not append:
            self._write({"journal": FORMAT_VERSION, "settings": settings})

    def add(self, op: str, measurements: Iterable[Measurement]) -> None:
        self._write({"op": op, "records": [record(m) for m in measurements]})

    def _write(self, entry: dict[str, object]) -> None:
        self._file.write(json.dumps(entry) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def check_settings(path: str, journal: Journal, settings: dict[str, object]) -> None:
    """Refuse to resume a journal made with settings that would make results incomparable."""
    differing = {k: (journal.settings.get(k), v) for k, v in settings.items() if journal.settings.get(k) != v}
    if differing:
        detail = ", ".join(f"{k}: journal {old!r}, now {new!r}" for k, (old, new) in differing.items())
        raise OpperfError(
            f"cannot resume {path}: it was made with other settings ({detail}); "
            "rerun with the same settings or without --resume"
        )
