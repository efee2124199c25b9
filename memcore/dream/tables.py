"""The consolidation tables (entry ledger, run journal, review queue) on one connection."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from sqlite3 import Connection

from memcore.journal import runs as journal
from memcore.recall import ledger
from memcore.workspace import db
from memcore.workspace.core import Workspace

_REVIEW_SCHEMA = """
CREATE TABLE IF NOT EXISTS dream_review (
    item_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    run_id TEXT,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    resolved_at TEXT,
    resolution TEXT
);
CREATE INDEX IF NOT EXISTS dream_review_pending ON dream_review (status, dedupe_key);
"""


@contextlib.contextmanager
def connect(ws: Workspace) -> Iterator[Connection]:
    """The workspace database with the ledger, journal and review tables in place; closed on
    exit."""
    conn = db.connect(ws.db_path)
    try:
        ledger.ensure_schema(conn)
        journal.ensure_schema(conn)
        conn.executescript(_REVIEW_SCHEMA)
        yield conn
    finally:
        conn.close()
