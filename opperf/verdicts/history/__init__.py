"""History: result files' rows over time in a store, and step detection on them. The store is an
SQLite file (the default: ``store``) or a PostgreSQL database many machines write to (``postgres``);
``open_history`` opens either from ``--db``."""

from __future__ import annotations

from opperf.verdicts.history.postgres import PostgresHistory, is_postgres
from opperf.verdicts.history.store import History

HistoryStore = History | PostgresHistory
"""Either store: they answer the same calls (add, remove, stored_runs, runs, series)."""


def open_history(db: str, create: bool = False) -> HistoryStore:
    """The store ``--db`` names: a ``postgresql://`` URL, else an SQLite file (``create``: make it
    where it is absent, as ``history add`` does)."""
    return PostgresHistory(db, create) if is_postgres(db) else History(db, create)
