"""The history store: result files' rows in one SQLite file, queried as series over runs.

The result files stay the source of truth: the store keeps, per run, where it came from and its
environment, and per row (a configuration's key and phase, as ``opperf diff`` matches them) the
median, its 95% interval, the sample count, the timer's tick, status and flags. Adding a file twice
adds it once (runs are known by a digest of their content), so the store can be rebuilt by adding
the files again; a run can be taken out (``remove``).

The store knows itself (a ``meta`` table: format and schema version): a path that is not one (a
misspelt ``--db``, another tool's SQLite file, a damaged or newer store) is refused with one line,
and only ``history add`` creates a store, saying so. Writers take the database's write lock and wait
for each other (``BUSY_TIMEOUT_S``), so two sweeps adding at once both land. Imports no framework.
"""

from __future__ import annotations

import abc
import json
import math
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from opperf.results.document import is_ab
from opperf.results.inputs import describe_inputs
from opperf.results.key import Key
from opperf.results.load import records_by_key
from opperf.results.migrations import digest as written_digest
from opperf.results.record import PHASES, Record
from opperf.utils.errors import OpperfError

T = TypeVar("T")
Store = TypeVar("Store", bound="StoreBase")

FORMAT = "opperf-history"
SCHEMA_VERSION = 2
"""2: a ``meta`` table names the store, and each row keeps its timer's tick (``tick_s``)."""

BUSY_TIMEOUT_S = 600.0
"""How long a writer waits for another one to finish before it gives up."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id {run_id},
    digest TEXT UNIQUE NOT NULL,
    source TEXT NOT NULL,
    started TEXT,
    framework TEXT,
    framework_version TEXT,
    device TEXT,
    environment TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rows (
    run_id {run_ref} NOT NULL REFERENCES runs(id){cascade},
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    namespace TEXT NOT NULL,
    inputs TEXT NOT NULL,
    phase TEXT NOT NULL,
    status TEXT NOT NULL,
    median_s {real},
    low_s {real},
    high_s {real},
    n INTEGER,
    flags TEXT NOT NULL,
    tick_s {real},
    PRIMARY KEY (run_id, key, phase)
);
CREATE INDEX IF NOT EXISTS rows_by_key ON rows (key, phase);
CREATE INDEX IF NOT EXISTS rows_by_op ON rows (op);
"""
"""The store's tables in either database, with its id and real types and whether a run's rows go
with it left to each dialect to name (``schema``): SQLite's store and PostgreSQL's are one schema."""
SQLITE = {"run_id": "INTEGER PRIMARY KEY", "run_ref": "INTEGER", "real": "REAL", "cascade": ""}
ROW_COLUMNS = (
    "run_id", "key", "op", "namespace", "inputs", "phase", "status",
    "median_s", "low_s", "high_s", "n", "flags", "tick_s",
)  # fmt: skip
"""The columns of ``rows``, in order (what ``run_rows`` gives per row); the first three its key."""


def schema(dialect: Mapping[str, str]) -> list[str]:
    """The store's statements, one each, with ``dialect``'s names for an id, a real and the rest."""
    return _statements(SCHEMA.format(**dialect))


LEGACY_TABLES = frozenset({"runs", "rows"})
"""The tables of a store written before version 2 (no ``meta``): read as they are, upgraded on add."""


@dataclass(frozen=True)
class Point:
    """One run's figure for a row: when the run started, its median and interval (seconds), its
    flags, and the file it came from."""

    started: str
    median: float
    low: float
    high: float
    flags: tuple[str, ...]
    source: str
    run: int = 0
    tick: float | None = None


@dataclass(frozen=True)
class Series:
    """A row's history: its key (as ``opperf diff`` matches rows), its phase, and its points in
    run order."""

    key: Key
    phase: str
    points: tuple[Point, ...]

    @property
    def label(self) -> str:
        shown = describe_inputs(json.loads(self.key.inputs))
        shown_settings = "".join(f" [{setting}]" for setting in self.key.qualifiers())
        return f"{self.key.name}({shown}){shown_settings} {self.phase}"


@dataclass(frozen=True)
class StoredRun:
    """One run in the store: its id (what ``history remove`` takes), when it started, its file and
    how many rows it holds."""

    id: int
    started: str
    source: str
    rows: int


class StoreBase(abc.ABC):
    """What both stores answer the same way over their own connection: the runs, their removal, the
    series, and a run's values as ``runs`` keeps them. A store supplies its reads and writes, its
    query parameter marker and how a run's rows go."""

    path: str
    marker = "?"
    """The query parameter marker of the store's database driver."""

    @abc.abstractmethod
    def _read(self, query: str, parameters: Sequence[object] = ()) -> list[tuple]: ...

    @abc.abstractmethod
    def _write(self, change: Callable[[], T]) -> T: ...

    @abc.abstractmethod
    def _delete_run(self, run_id: int) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self: Store) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_version(self, meta: Mapping[str, str]) -> None:
        """Refuse a store a newer opperf wrote (closing it first)."""
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            self.close()
            raise OpperfError(
                f"{self.path}: a history of schema version {version}, newer than this opperf reads "
                f"({SCHEMA_VERSION}); upgrade opperf"
            )

    def _tick(self) -> str:
        """The column that holds a row's timer tick."""
        return "rows.tick_s"

    def remove(self, run: str) -> StoredRun:
        """Take the run ``run`` (its id, or the file it was added from, as a path from here or as the
        store names it) out of the store."""
        here = os.path.abspath(run)
        found = [r for r in self.stored_runs() if str(r.id) == run or r.source in (run, here)]
        if len(found) != 1:
            which = "no run" if not found else f"{len(found)} runs"
            raise OpperfError(
                f"{self.path} holds {which} with the id or file {run!r}; `opperf history runs` lists them"
            )
        self._write(lambda: self._delete_run(found[0].id))
        return found[0]

    def stored_runs(self) -> list[StoredRun]:
        """Every run in the store, in the order they started."""
        query = (
            "SELECT runs.id, runs.started, runs.source, COUNT(rows.run_id) FROM runs LEFT JOIN rows "
            "ON rows.run_id = runs.id GROUP BY runs.id ORDER BY runs.started, runs.id"
        )
        return [StoredRun(i, started or "", source, count) for i, started, source, count in self._read(query)]

    def run_count(self) -> int:
        """How many runs the store holds."""
        return self._read("SELECT COUNT(*) FROM runs")[0][0]

    def series(self, op: str | None = None) -> list[Series]:
        """Every row's series (of operator ``op`` when given), its points in the order the runs
        started."""
        query = SERIES_QUERY.format(tick=self._tick())
        parameters: list[object] = []
        if op is not None:
            query += f" AND rows.op = {self.marker}"
            parameters.append(op)
        query += " ORDER BY rows.key, rows.phase, runs.started, runs.id"
        found = self._read(query, parameters)
        try:
            return series_of(found)
        except (ValueError, TypeError) as error:  # a row edited by hand, not as history add writes it
            raise OpperfError(
                f"{self.path}: a damaged history database ({error}); rebuild it with history add"
            ) from None


def run_values(document: Mapping[str, Any], source: str) -> tuple[object, ...]:
    """A results document's run as ``runs`` keeps it: digest, source (its full path: a relative one
    would name another file from another folder), start, framework, version, device and
    environment; OpperfError for an A/B file."""
    if is_ab(document):
        raise OpperfError(f"{source}: an A/B file holds two builds; add the sweeps' result files instead")
    environment = document.get("environment") or {}
    return (
        str(document.get("written_digest") or written_digest(document)),
        os.path.abspath(source),
        environment.get("started"),
        environment.get("framework"),
        environment.get("framework_version"),
        environment.get("device"),
        json.dumps(environment, sort_keys=True),
    )


RUN_COLUMNS = "digest, source, started, framework, framework_version, device, environment"


class History(StoreBase):
    """The history store at ``path``. ``create``: make it when absent (``history add``, ``sweep
    --history``); otherwise a path that is no store is refused."""

    def __init__(self, path: str, create: bool = False) -> None:
        self.path = path
        self.created = False
        folder = Path(path).resolve().parent
        if not folder.is_dir():
            raise OpperfError(
                f"history database folder {str(folder)!r} does not exist; create it or pass another --db"
            )
        if not Path(path).exists() and not create:
            raise OpperfError(
                f"{path}: no such history database; create one with `opperf history add RESULTS --db {path}`"
            )
        try:
            self._connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            schema = list(self._connection.execute("SELECT type, name FROM sqlite_master"))
        except sqlite3.DatabaseError as error:
            raise OpperfError(
                f"{path}: not an opperf history database ({error}); pass another --db"
            ) from None
        own_code = sorted(f"{kind} {name}" for kind, name in schema if kind in ("trigger", "view"))
        if own_code:
            self._connection.close()
            raise OpperfError(
                f"{path}: a history database with SQL of its own ({', '.join(own_code)}), which would run as "
                "opperf reads or writes it; pass a store opperf made, or rebuild one from the result files"
            )
        tables = {name for kind, name in schema if kind == "table"}
        self._legacy = tables == set(LEGACY_TABLES)
        if not tables:
            if not create:
                self._connection.close()
                raise OpperfError(f"{path}: an empty file, not an opperf history database; pass another --db")
            self._write(self._create)
            self.created = True
        elif not self._legacy:
            self._check_meta(tables)

    def _check_meta(self, tables: set[str]) -> None:
        """Refuse a database that is not an opperf store, or one a newer opperf wrote."""
        meta = dict(self._connection.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        if meta.get("format") != FORMAT:
            self._connection.close()
            listed = ", ".join(sorted(tables))
            raise OpperfError(
                f"{self.path}: not an opperf history database (its tables: {listed}); pass another --db"
            )
        self._check_version(meta)

    def close(self) -> None:
        self._connection.close()

    def _write(self, change: Callable[[], T]) -> T:
        """``change`` in one transaction holding the write lock (another writer waits for it, up to
        ``BUSY_TIMEOUT_S``); a locked, read-only, full or damaged database is OpperfError."""
        try:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                result = change()
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")
            return result
        except sqlite3.OperationalError as error:
            raise OpperfError(f"cannot write {self.path}: {_reason(error)}") from None
        except sqlite3.DatabaseError as error:
            raise OpperfError(
                f"{self.path}: a damaged history database ({error}); rebuild it with history add"
            ) from None

    def add(self, document: Mapping[str, Any], source: str) -> int | None:
        """Add one results document (from ``source``); the number of rows added, or None when this
        run is in the store already."""
        values = run_values(document, source)
        records = run_records(document, source)
        if self._legacy:
            self._write(self._upgrade)

        def insert() -> int | None:
            cursor = self._connection.execute(
                f"INSERT OR IGNORE INTO runs ({RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", values
            )
            if cursor.rowcount == 0:
                return None
            rows = run_rows(cast(int, cursor.lastrowid), records)
            self._connection.executemany(
                "INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows
            )
            return len(rows)

        return self._write(insert)

    def _create(self) -> None:
        for statement in schema(SQLITE):
            self._connection.execute(statement)
        self._write_meta()

    def _write_meta(self) -> None:
        self._connection.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))),
        )

    def _upgrade(self) -> None:
        """A store of version 1 (no ``meta``, no ticks) made version 2, in place."""
        columns = {row[1] for row in self._connection.execute("PRAGMA table_info(rows)")}
        if "tick_s" not in columns:
            self._connection.execute("ALTER TABLE rows ADD COLUMN tick_s REAL")
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        self._write_meta()
        self._legacy = False

    def _delete_run(self, run_id: int) -> None:
        self._connection.execute("DELETE FROM rows WHERE run_id = ?", (run_id,))
        self._connection.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def _read(self, query: str, parameters: Sequence[object] = ()) -> list[tuple]:
        try:
            return self._connection.execute(query, parameters).fetchall()
        except sqlite3.DatabaseError as error:
            raise OpperfError(f"{self.path}: cannot be read ({error}); rebuild it with history add") from None

    def _tick(self) -> str:
        return "rows.tick_s" if not self._legacy else "NULL"


SERIES_QUERY = (
    "SELECT rows.key, rows.phase, runs.started, rows.median_s, rows.low_s, rows.high_s, rows.flags, "
    "runs.source, runs.id, {tick} FROM rows JOIN runs ON rows.run_id = runs.id "
    "WHERE rows.status = 'ok' AND rows.median_s != 0"
)
"""The points of every row that measured, as ``series_of`` reads them (``{tick}``: the tick column); a
median of 0 s (a timer that read nothing for half the passes) is no level a step could leave, and a
negative one is damage ``series_of`` names."""


def series_of(found: Sequence[Sequence[Any]]) -> list[Series]:
    """The series of ``SERIES_QUERY``'s rows, grouped by the key read back rather than its stored
    text (a run stored before an option was keyed, ``--values``, lacks it, and reads as its default,
    in the same series), each in run order."""
    grouped: dict[tuple[Key, str], list[Point]] = {}
    for key, phase, started, median, low, high, flags, source, run, tick_s in found:
        figures = (median, low, high, *([tick_s] if tick_s is not None else []))
        if not all(
            isinstance(figure, (int, float)) and math.isfinite(figure) and figure >= 0 for figure in figures
        ):
            raise ValueError(f"a row of {json.loads(key).get('op')!r} holds {figures!r:.80}, not seconds")
        point = Point(started or "", median, low, high, tuple(json.loads(flags)), source, run, tick_s)
        grouped.setdefault((Key.from_mapping(json.loads(key)), phase), []).append(point)
    return [
        Series(key, phase, tuple(sorted(points, key=lambda point: (point.started, point.run))))
        for (key, phase), points in grouped.items()
    ]


def run_records(document: Mapping[str, Any], source: str) -> Mapping[Key, Record]:
    """The records of a results document (from ``source``) by key, read as ``diff`` reads them;
    OpperfError naming a record that cannot be read or repeats a configuration."""
    return records_by_key(source, document.get("results") or [])


def run_rows(run_id: int, records: Mapping[Key, Record]) -> list[tuple[object, ...]]:
    """The rows a run's records add to a store, for its run ``run_id``: one per phase measured, and
    one status row (no figures) for a record that did not run."""
    rows: list[tuple[object, ...]] = []
    for key, record in records.items():
        where = (run_id, json.dumps(key.as_mapping(), sort_keys=True), key.op, key.namespace, key.inputs)
        flags = json.dumps(list(record.flags))
        if record.status != "ok":
            rows.append((*where, PHASES[0], record.status, None, None, None, None, flags, None))
            continue
        for phase in PHASES:
            measured = record.phases.get(phase)
            if measured is not None:
                figures = (measured.median, measured.low, measured.high, len(measured.samples))
                rows.append((*where, phase, record.status, *figures, flags, measured.tick))
    return rows


def _statements(script: str) -> list[str]:
    """The statements of a schema script, one each (``executescript`` would commit first)."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]


def _reason(error: sqlite3.OperationalError) -> str:
    """What a failed write means, in words with the way out."""
    text = str(error)
    if "locked" in text or "busy" in text:
        return f"another process held it for {BUSY_TIMEOUT_S:g} s; try again when it is done"
    if "readonly" in text or "read-only" in text:
        return "it is read-only; pass a writable --db"
    if "full" in text:
        return "the disk is full; make room and add again"
    if any(sign in text for sign in ("no such column", "no such table", "columns but", "has no column")):
        return f"its tables are not as opperf makes them ({text}); rebuild it with history add"
    return text
