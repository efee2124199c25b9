"""Index connections pooled between searches (memcore.search.connections): reused while the
database file is the same, never once it was replaced."""

from __future__ import annotations

import sqlite3

from memcore.search.connections import IndexPool
from memcore.search.query import search
from memcore.workspace.core import Workspace


def _note(ws: Workspace) -> None:
    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Day\n\nThe kafka cluster was upgraded.\n", encoding="utf-8"
    )


def test_a_second_search_reuses_the_connection(ws: Workspace) -> None:
    _note(ws)
    pool = IndexPool()
    assert search(ws, "kafka", record=False, pool=pool).results
    idle = pool.idle(ws)
    assert len(idle) == 1
    assert search(ws, "kafka upgraded", record=False, pool=pool).results
    assert pool.idle(ws) == idle  # the same connection came back
    pool.close()
    assert pool.idle(ws) == []
    assert search(ws, "kafka", record=False, pool=pool).results
    assert pool.idle(ws) == []  # a closed pool keeps nothing


def test_a_replaced_database_is_never_served_from_the_pool(ws: Workspace) -> None:
    _note(ws)
    pool = IndexPool()
    assert search(ws, "kafka", record=False, pool=pool).results
    for suffix in ("", "-wal", "-shm"):  # the user deletes memcore.sqlite (a cache here)
        ws.db_path.with_name(ws.db_path.name + suffix).unlink(missing_ok=True)
    assert search(ws, "kafka", record=False, pool=pool).results
    with sqlite3.connect(ws.db_path) as conn:  # the index went into the new file
        assert conn.execute("SELECT count(*) FROM search_files").fetchone()[0] == 1
    pool.close()


def test_without_a_pool_nothing_stays_open(ws: Workspace) -> None:
    _note(ws)
    assert search(ws, "kafka", record=False).results
    holder = sqlite3.connect(ws.db_path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # no idle connection of this process holds the WAL
    holder.execute("ROLLBACK")
    holder.close()
