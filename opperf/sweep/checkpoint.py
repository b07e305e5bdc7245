"""The sweep's journal: one JSON line per finished operator, so a killed sweep loses only the operator
in flight, and ``--resume`` continues where it stopped. An A/B job keeps one too, a line per measured
pair (``opperf.verdicts.ab.journal``); the header names the kind, so neither resumes the other's.

The first line records the settings that make results comparable; resuming with other settings is
refused. Each later line holds one operator's records in the results-file format, written (handed to
the operating system, so a killed sweep keeps it) before the next operator starts, and synced to disk
while that operator runs: a sync takes milliseconds the worker would otherwise spend waiting, and the
next line is written only once the previous one is on disk. A journal is locked while a sweep writes
it, so two sweeps cannot share one. Damage is repaired or reported, never silently dropped: a torn last
line (a kill or a full disk mid-write) is cut off before anything is appended, and a damaged line
elsewhere is skipped and counted, the lines after it kept.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO

from opperf.results.document import measurement_from_record, record
from opperf.results.measurement import Measurement
from opperf.results.schema import record_problem
from opperf.utils.errors import OpperfError
from opperf.utils.files import open_to_append
from opperf.utils.reading import read_bytes

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Journal:
    """What an interrupted sweep had finished: per operator, its measurements; and what was damaged
    (``damaged`` lines skipped, whether the last line was ``torn``)."""

    settings: dict[str, Any]
    finished: dict[str, tuple[Measurement, ...]]
    damaged: int = 0
    torn: bool = False


KINDS = {"sweep": "sweep", "ab": "A/B job"}
"""The jobs that keep a journal, and what messages call them."""


@dataclass(frozen=True)
class JournalLines:
    """A journal's settings, its entries after the header (None for a line that is not JSON), and
    whether its last line was torn."""

    settings: dict[str, Any]
    entries: tuple[Any, ...]
    torn: bool


def read_lines(path: str, kind: str) -> JournalLines | None:
    """The journal of ``kind`` at ``path``, or None if there is none; OpperfError if it is not one
    (a journal without a kind is a sweep's, as they were written before A/B jobs kept one)."""
    if not os.path.exists(path):
        return None
    try:
        content = read_bytes(path)
    except OSError as error:
        raise OpperfError(
            f"cannot read the journal {path}: {error.strerror}; remove it, or pass --fresh"
        ) from None
    torn = bool(content) and not content.endswith(b"\n")
    lines = content.split(b"\n")
    lines.pop()  # what follows the last newline: nothing, or a torn line
    header = _entry(lines[0]) if lines else None
    if (
        not isinstance(header, dict)
        or header.get("journal") != FORMAT_VERSION
        or header.get("kind", "sweep") != kind
        or not isinstance(header.get("settings"), dict)
    ):
        raise OpperfError(
            f"{path} is not an opperf {KINDS[kind]} journal (version {FORMAT_VERSION}) or its first line "
            "is damaged; start afresh with --fresh (it discards the journal)"
        )
    return JournalLines(header["settings"], tuple(_entry(line) for line in lines[1:]), torn)


def load_journal(path: str) -> Journal | None:
    """The sweep journal at ``path``, or None if there is none; OpperfError if it is not one."""
    lines = read_lines(path, "sweep")
    if lines is None:
        return None
    finished: dict[str, tuple[Measurement, ...]] = {}
    damaged = 0
    for entry in lines.entries:
        op, records = (entry.get("op"), entry.get("records")) if isinstance(entry, dict) else (None, None)
        try:
            if not isinstance(op, str) or not isinstance(records, list) or any(map(record_problem, records)):
                raise ValueError("not a journal entry")
            measured = tuple(measurement_from_record(r) for r in records)
            if any(m.spec.op != op for m in measured):  # another operator's records: not this one's
                raise ValueError("records of another operator")
            if any(_contradicts(m, lines.settings) for m in measured):
                raise ValueError("records measured otherwise than the journal says")
            finished[op] = measured
        except ValueError:  # a damaged line (or a setting no option takes): measured again
            damaged += 1
    return Journal(settings=lines.settings, finished=finished, damaged=damaged, torn=lines.torn)


RECORDED_AS_SWEPT = ("framework", "dtype", "run_backward", "mode", "cache", "values", "layout")
"""The keyed options every record of a sweep shares with its journal's settings (a sweep's factors
vary the device, thread count and stage of its records)."""


def _contradicts(measurement: Measurement, settings: Mapping[str, Any]) -> bool:
    """Whether a journal line's record says it was measured with options its journal's settings do
    not have (a line edited to float64 on gpu(3) in a float32 CPU sweep's journal)."""
    options = measurement.spec.options.settings()
    return any(name in settings and options[name] != settings[name] for name in RECORDED_AS_SWEPT)


def _entry(line: bytes) -> object:
    """A line's JSON value, or None when it is not JSON text."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep, a number of 4,300+ digits
        return None


class JournalWriter:
    """Appends entries (a sweep's finished operators) to the journal, each line flushed, then synced
    to disk in the background (a line is written only once the one before it is on disk, and closing
    waits for the last), under an exclusive lock held until it is closed."""

    def __init__(self, path: str, settings: dict[str, Any], *, append: bool, kind: str = "sweep") -> None:
        # Unbuffered: a line is on its way to the disk when ``write`` returns, and nothing is left in
        # a buffer for ``close`` to fail on (a full disk would raise again there). Opened to append,
        # and emptied or cut back only once locked: a job refused the lock leaves the journal of the
        # job that holds it as it was.
        self._file: BinaryIO = open_to_append(path)
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            raise OpperfError(
                f"another {KINDS[kind]} is writing {path}; wait for it to finish, or choose another "
                "--output-file"
            ) from None
        if append:
            _cut_torn_line(path)
        else:
            os.ftruncate(self._file.fileno(), 0)
        self._file.seek(0, os.SEEK_END)
        self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opperf-journal")
        self._syncing: Future | None = None
        if not append:
            self.write({"journal": FORMAT_VERSION, "kind": kind, "settings": settings})

    def add(self, op: str, measurements: Iterable[Measurement]) -> None:
        """A sweep's finished operator."""
        self.write({"op": op, "records": [record(m) for m in measurements]})

    def write(self, entry: dict[str, Any]) -> None:
        """One entry, as a line."""
        line = memoryview((json.dumps(entry) + "\n").encode("utf-8"))
        self._synced()
        position = self._file.tell()
        try:
            while line:  # a raw write may take part of the line
                line = line[self._file.write(line) :]
            self._syncing = self._syncer.submit(os.fsync, self._file.fileno())
        except OSError as error:
            # A full disk: take the partial line back, so the journal ends on a whole one.
            os.truncate(self._file.fileno(), position)
            raise OpperfError(
                f"cannot write the journal ({error.strerror}); what finished before is kept"
            ) from None

    def _synced(self) -> None:
        """Wait for the last line's sync; OpperfError if the disk refused it."""
        syncing, self._syncing = self._syncing, None
        if syncing is None:
            return
        try:
            syncing.result()
        except OSError as error:
            raise OpperfError(
                f"cannot sync the journal to disk ({error.strerror}); what finished before is kept"
            ) from None

    def close(self) -> None:
        try:
            self._synced()
        finally:
            self._syncer.shutdown()
            self._file.close()


def _cut_torn_line(path: str) -> None:
    """Cut a journal back to its last whole line, so an appended entry starts a line of its own."""
    if not os.path.exists(path):
        return
    with open(path, "rb+") as journal:
        content = journal.read()
        if content and not content.endswith(b"\n"):
            journal.truncate(content.rfind(b"\n") + 1)


def check_settings(path: str, journal: Journal | JournalLines, settings: dict[str, Any]) -> None:
    """Refuse to resume a journal made with settings that would make results incomparable."""
    settings = json.loads(json.dumps(settings))  # as the journal stores them: a thread list is a list
    keys = sorted(set(settings) | set(journal.settings))
    differing = {
        k: (journal.settings.get(k), settings.get(k))
        for k in keys
        if journal.settings.get(k) != settings.get(k)
    }
    if differing:
        detail = ", ".join(f"{k}: journal {old!r}, now {new!r}" for k, (old, new) in differing.items())
        raise OpperfError(
            f"cannot resume {path}: it was made with other settings ({detail}); "
            "rerun with the same settings, or start afresh with --fresh"
        )
