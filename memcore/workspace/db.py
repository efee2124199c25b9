"""The workspace database ``memory/.dreams/memcore.sqlite``: index, ledger, journal, state.

Each module owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS``. The file is
safe to delete; a file that is not a SQLite database is moved aside and started afresh.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

log = logging.getLogger(__name__)


def connect(path: Path | str) -> sqlite3.Connection:
    """Open (and create) the database with WAL and a busy timeout; quarantine a corrupt file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _open(path)
    except sqlite3.DatabaseError as exc:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = path.with_name(f"{path.name}.corrupt-{stamp}")
        log.warning("database %s is unreadable (%s); moved aside to %s", path, exc, aside)
        path.replace(aside)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.unlink()
        return _open(path)


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Touch the schema so a corrupt file fails here, not later.
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return conn
