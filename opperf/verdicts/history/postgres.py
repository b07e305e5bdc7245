"""The history store in a PostgreSQL database, which many machines write to at once (``--db
postgresql://...``): the tables of the SQLite store (``opperf.verdicts.history.store``), through
psycopg 3 (the ``opperf[postgres]`` extra).

Adding a file twice adds it once, however many processes add it at the same moment: a run is known
by the digest of its content, and ``INSERT ... ON CONFLICT (digest) DO NOTHING`` lets the unique index
decide, one transaction per file. Creating the tables takes a transaction-scoped advisory lock, so
writers that find an empty database at once create them once. The URL is data: it names a server and
a database, and opperf reads and writes its own tables there, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from opperf.utils.errors import OpperfError
from opperf.verdicts.history.store import (
    FORMAT,
    ROW_COLUMNS,
    RUN_COLUMNS,
    SCHEMA_VERSION,
    StoreBase,
    run_records,
    run_rows,
    run_values,
    schema,
)

T = TypeVar("T")

URL_PREFIXES = ("postgresql://", "postgres://")

POSTGRES = {
    "run_id": "BIGSERIAL PRIMARY KEY",
    "run_ref": "BIGINT",
    "real": "DOUBLE PRECISION",
    "cascade": " ON DELETE CASCADE",
}
"""PostgreSQL's names for the store's types; a run's rows go with it (``_delete_run``)."""
_REPLACED = tuple(column for column in ROW_COLUMNS if column not in ("run_id", "key", "phase"))
"""What a row a document holds twice takes from its later one, as SQLite's ``INSERT OR REPLACE``."""
CREATE_LOCK = 0x6F70_7066
"""The advisory lock writers that find no tables take while one of them creates them."""


def is_postgres(db: str) -> bool:
    """Whether ``--db`` names a PostgreSQL database rather than an SQLite file."""
    return db.startswith(URL_PREFIXES)


def shown(url: str) -> str:
    """The URL as messages show it: without a password."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


class PostgresHistory(StoreBase):
    """The history store in the PostgreSQL database at ``url``; ``create``: make its tables where
    the database has none (``history add``, ``sweep --history``), otherwise such a database is refused."""

    marker = "%s"

    def __init__(self, url: str, create: bool = False) -> None:
        try:
            import psycopg
        except ImportError:
            raise OpperfError("a PostgreSQL --db needs psycopg: pip install 'opperf[postgres]'") from None
        self.path = shown(url)
        self.created = False
        self._errors = psycopg.Error
        try:
            self._connection = psycopg.connect(url, autocommit=False, connect_timeout=30)
        except psycopg.Error as error:
            raise OpperfError(f"{self.path}: cannot connect ({_first_line(error)}); check the URL") from None
        tables = {name for (name,) in self._read(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )}  # fmt: skip
        if "meta" not in tables:
            if not create:
                self.close()
                raise OpperfError(
                    f"{self.path}: no opperf history in this database; create it with "
                    f"`opperf history add RESULTS --db {self.path}`"
                )
            self.created = self._write(self._create)
        self._check_meta()

    def _create(self) -> bool:
        """The tables, unless a writer that took the lock first made them; whether this one did."""
        cursor = self._connection.cursor()
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (CREATE_LOCK,))
        cursor.execute("SELECT to_regclass('meta') IS NOT NULL")
        if (cursor.fetchone() or (False,))[0]:
            return False
        for statement in schema(POSTGRES):
            cursor.execute(statement)
        cursor.executemany(
            "INSERT INTO meta (key, value) VALUES (%s, %s)",
            (("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))),
        )
        return True

    def _check_meta(self) -> None:
        meta = dict(self._read("SELECT key, value FROM meta"))
        if meta.get("format") != FORMAT:
            self.close()
            raise OpperfError(f"{self.path}: its meta table is not an opperf history's; pass another --db")
        self._check_version(meta)

    def close(self) -> None:
        self._connection.close()

    def _write(self, change: Callable[[], T]) -> T:
        """``change`` in one transaction; a failure rolls it back and is OpperfError."""
        try:
            with self._connection.transaction():
                return change()
        except self._errors as error:
            raise OpperfError(f"cannot write {self.path}: {_first_line(error)}") from None

    def _read(self, query: str, parameters: Sequence[object] = ()) -> list[tuple]:
        try:
            with self._connection.transaction():
                return self._connection.execute(query, parameters).fetchall()
        except self._errors as error:
            raise OpperfError(f"{self.path}: cannot be read ({_first_line(error)})") from None

    def add(self, document: Mapping[str, Any], source: str) -> int | None:
        """Add one results document (from ``source``); the number of rows added, or None when this
        run is in the store already (added before, or by another writer at the same moment)."""
        values = run_values(document, source)
        records = run_records(document, source)

        def insert() -> int | None:
            cursor = self._connection.cursor()
            cursor.execute(
                f"INSERT INTO runs ({RUN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (digest) DO NOTHING RETURNING id",
                values,
            )
            inserted = cursor.fetchone()
            if inserted is None:
                return None
            rows = run_rows(inserted[0], records)
            cursor.executemany(
                "INSERT INTO rows VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                f"ON CONFLICT (run_id, key, phase) DO UPDATE SET ({', '.join(_REPLACED)}) = "
                f"({', '.join(f'EXCLUDED.{column}' for column in _REPLACED)})",
                rows,
            )
            return len(rows)

        return self._write(insert)

    def _delete_run(self, run_id: int) -> None:
        self._connection.execute("DELETE FROM runs WHERE id = %s", (run_id,))  # its rows cascade


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
