"""The user database ``global.sqlite`` in the user data directory (``$MEMCORE_USER_DIR``).

It holds what every workspace of one user shares, so that N workspaces (and the gateway that
serves them) behave as one: the daily token ledger (one budget per user, not one per
workspace), the global short memory with its versions, the mirrored project memories it is
built from, and the lease of the global step. Same tables as a workspace database, plus
``sess_projects``.
"""

from __future__ import annotations

import sqlite3

from memcore.sessions.settings import user_dir
from memcore.sessions.store import ensure_schema, transaction
from memcore.workspace.db import connect

USER_DB_NAME = "global.sqlite"


def open_user_db() -> sqlite3.Connection:
    """Open (and create) the user database."""
    conn = connect(user_dir() / USER_DB_NAME)
    ensure_schema(conn)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS sess_projects (id TEXT PRIMARY KEY, workspace TEXT NOT NULL,"
        " name TEXT, updated_at TEXT)"
    )
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sess_budget_calls)")}
    if "workspace" not in cols:
        try:
            conn.execute("ALTER TABLE sess_budget_calls ADD COLUMN workspace TEXT")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc).lower():
                raise
    return conn


def migrate_ledger(ws_conn: sqlite3.Connection, user: sqlite3.Connection, workspace: str) -> int:
    """Move a workspace's own ledger rows (kept there by earlier versions) into the user
    ledger, so that today's spending still counts after the move. Returns rows moved."""
    rows = ws_conn.execute(
        "SELECT run_id, day, model, reserved, prompt_tokens, cached_tokens, completion_tokens,"
        " charged, status, created_at, settled_at FROM sess_budget_calls ORDER BY id"
    ).fetchall()
    if not rows:
        return 0
    with transaction(user):
        user.executemany(
            "INSERT INTO sess_budget_calls (run_id, day, model, reserved, prompt_tokens,"
            " cached_tokens, completion_tokens, charged, status, created_at, settled_at,"
            " workspace) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(*tuple(r), workspace) for r in rows],
        )
    with transaction(ws_conn):
        ws_conn.execute("DELETE FROM sess_budget_calls")
    return len(rows)
