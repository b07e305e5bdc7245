"""The history store: result files' rows in one SQLite file, queried as series over runs.

The result files stay the source of truth: the store keeps, per run, where it came from and its
environment, and per row (a configuration's key and phase, as ``opperf diff`` matches them) the
median, its 95% interval, the sample count, status and flags. Adding a file twice adds it once (runs
are known by a digest of their content), so the store can be rebuilt by adding the files again.
Imports no framework.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from opperf.errors import OpperfError
from opperf.report.document import is_ab
from opperf.utils.stats import summarize
from opperf.verdicts.load import PHASES, Key, record_key

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    digest TEXT UNIQUE NOT NULL,
    source TEXT NOT NULL,
    started TEXT,
    framework TEXT,
    framework_version TEXT,
    device TEXT,
    environment TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rows (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    namespace TEXT NOT NULL,
    inputs TEXT NOT NULL,
    phase TEXT NOT NULL,
    status TEXT NOT NULL,
    median_s REAL,
    low_s REAL,
    high_s REAL,
    n INTEGER,
    flags TEXT NOT NULL,
    PRIMARY KEY (run_id, key, phase)
);
CREATE INDEX IF NOT EXISTS rows_by_key ON rows (key, phase);
CREATE INDEX IF NOT EXISTS rows_by_op ON rows (op);
"""


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


@dataclass(frozen=True)
class Series:
    """A row's history: its key (as ``opperf diff`` matches rows), its phase, and its points in
    run order."""

    key: Key
    phase: str
    points: tuple[Point, ...]

    @property
    def label(self) -> str:
        inputs = json.loads(self.key.inputs)
        shown = ", ".join(f"{name}={_shape(value)}" for name, value in inputs.items())
        return f"{self.key.namespace}.{self.key.op}({shown}) {self.phase}"


def _shape(value: object) -> str:
    if isinstance(value, dict) and "shape" in value:
        return "x".join(map(str, value["shape"])) or "scalar"
    return json.dumps(value)


class History:
    """A history store at ``path`` (created on first use)."""

    def __init__(self, path: str) -> None:
        folder = Path(path).resolve().parent
        if not folder.is_dir():
            raise OpperfError(
                f"history database folder {str(folder)!r} does not exist; create it or pass another --db"
            )
        try:
            self._connection = sqlite3.connect(path)
            self._connection.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise OpperfError(
                f"{path}: not an opperf history database ({error}); pass another --db"
            ) from None

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._connection.close()

    def add(self, document: Mapping[str, object], source: str) -> int | None:
        """Add one results document (from ``source``); the number of rows added, or None when this
        run is in the store already."""
        if is_ab(document):
            raise OpperfError(f"{source}: an A/B file holds two builds; add the sweeps' result files instead")
        environment = document.get("environment") or {}
        digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
        with self._connection:
            cursor = self._connection.execute(
                "INSERT OR IGNORE INTO runs (digest, source, started, framework, framework_version, device, "
                "environment) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    digest,
                    source,
                    environment.get("started"),
                    environment.get("framework"),
                    environment.get("framework_version"),
                    environment.get("device"),
                    json.dumps(environment, sort_keys=True),
                ),
            )
            if cursor.rowcount == 0:
                return None
            rows = list(_rows(cursor.lastrowid, document.get("results") or []))
            self._connection.executemany("INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        return len(rows)

    def runs(self) -> int:
        return self._connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def series(self, op: str | None = None, inputs: str | None = None) -> list[Series]:
        """Every row's series (of operator ``op``, whose inputs contain ``inputs``, when given), its
        points in the order the runs started."""
        query = (
            "SELECT rows.key, rows.phase, runs.started, rows.median_s, rows.low_s, rows.high_s, rows.flags, "
            "runs.source FROM rows JOIN runs ON rows.run_id = runs.id WHERE rows.status = 'ok'"
        )
        parameters: list[object] = []
        if op is not None:
            query += " AND rows.op = ?"
            parameters.append(op)
        if inputs is not None:
            query += " AND instr(rows.inputs, ?) > 0"
            parameters.append(inputs)
        query += " ORDER BY rows.key, rows.phase, runs.started, runs.id"
        grouped: dict[tuple[str, str], list[Point]] = {}
        for key, phase, started, median, low, high, flags, source in self._connection.execute(
            query, parameters
        ):
            point = Point(started or "", median, low, high, tuple(json.loads(flags)), source)
            grouped.setdefault((key, phase), []).append(point)
        return [
            Series(Key(**json.loads(key)), phase, tuple(points)) for (key, phase), points in grouped.items()
        ]


def _rows(run_id: int, results: list) -> Iterator[tuple[object, ...]]:
    for record in results:
        key = record_key(record)
        encoded = json.dumps(dataclasses.asdict(key), sort_keys=True)
        ok = record["status"] == "ok"
        for phase in PHASES if ok else PHASES[:1]:  # a record that did not run has one status row
            block = record.get(phase) if ok else None
            if ok and not block:
                continue
            summary = summarize(block["samples_s"]) if block else None
            yield (
                run_id,
                encoded,
                key.op,
                key.namespace,
                key.inputs,
                phase,
                record["status"],
                summary.median if summary else None,
                summary.median_low if summary else None,
                summary.median_high if summary else None,
                summary.n if summary else None,
                json.dumps(record.get("flags") or []),
            )
