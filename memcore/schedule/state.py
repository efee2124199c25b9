"""Job state and run history of the scheduler, in the workspace's ``memcore.sqlite``.

Tables ``schedule_state`` (one row per job) and ``schedule_runs`` (recent runs). Used through
``memcore.schedule``, which re-exports the public names.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from memcore.errors import WorkspaceError
from memcore.workspace import db
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace

#: Runs kept in the ``schedule_runs`` table per job.
MAX_RUNS_KEPT = 500


@dataclass
class JobState:
    """What the scheduler remembers about one job of one workspace."""

    job: str
    created_at: datetime | None = None  # first time the scheduler saw the job (catch-up baseline)
    last_run_at: datetime | None = None  # start of the last run (any trigger)
    last_slot: datetime | None = None  # the due time the last scheduled run consumed
    last_status: str | None = None  # ok | failed | skipped | interrupted
    last_result: dict[str, Any] | None = None
    last_error: str | None = None
    consecutive_failures: int = 0
    next_run_at: datetime | None = None  # last good computed due time (kept on config errors)
    running: bool = False
    config_error: str | None = None  # the error that stopped next_due, if any
    config_error_since: datetime | None = None  # when that error was first seen
    cadence: str | None = None  # the last good cadence as JSON ({"cron", "tz"} | {"interval"})
    cadence_since: datetime | None = None  # when the cadence last changed (slots from then on)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in asdict(self).items():
            out[_camel(k)] = iso_ms(v) if isinstance(v, datetime) else v
        return out


_SCHEMA = """
CREATE TABLE IF NOT EXISTS schedule_state (
    job TEXT PRIMARY KEY,
    created_at TEXT,
    last_run_at TEXT,
    last_slot TEXT,
    last_status TEXT,
    last_result TEXT,
    last_error TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    next_run_at TEXT,
    running INTEGER NOT NULL DEFAULT 0,
    config_error TEXT,
    config_error_since TEXT,
    cadence TEXT,
    cadence_since TEXT
);
CREATE TABLE IF NOT EXISTS schedule_claims (
    job TEXT NOT NULL,
    slot TEXT NOT NULL,
    owner TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    PRIMARY KEY (job, slot)
);
CREATE TABLE IF NOT EXISTS gateway_instances (
    id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    address TEXT,
    started_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL,
    trigger TEXT NOT NULL,
    slot TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms INTEGER,
    status TEXT NOT NULL,
    result TEXT,
    error TEXT,
    sizes TEXT
);
CREATE INDEX IF NOT EXISTS schedule_runs_job ON schedule_runs(job, id);
"""

_DT_FIELDS = (
    "created_at",
    "last_run_at",
    "last_slot",
    "next_run_at",
    "config_error_since",
    "cadence_since",
)
_ADDED_COLUMNS = ("config_error_since", "cadence", "cadence_since")
MAX_CLAIMS_KEPT = 500


def _ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    have = {r[1] for r in conn.execute("PRAGMA table_info(schedule_state)")}
    for col in _ADDED_COLUMNS:  # a table made by an older memcore
        if col not in have:
            with contextlib.suppress(sqlite3.OperationalError):  # another process added it
                conn.execute(f"ALTER TABLE schedule_state ADD COLUMN {col} TEXT")
    if "sizes" not in {r[1] for r in conn.execute("PRAGMA table_info(schedule_runs)")}:
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("ALTER TABLE schedule_runs ADD COLUMN sizes TEXT")


_CONNS: dict[str, tuple[sqlite3.Connection, threading.Lock, int]] = {}
_CONNS_LOCK = threading.Lock()


@contextlib.contextmanager
def _conn(ws: Workspace) -> Iterator[sqlite3.Connection]:
    """A cached connection to the workspace database (one per file, used under a lock).

    Opening and closing SQLite in WAL mode costs milliseconds (the close checkpoints); the
    gateway asks for job state on every status poll and tick, so the connection is kept. A
    database file that was deleted or replaced is noticed (inode) and reopened.
    """
    if not ws.root.is_dir():
        raise WorkspaceError(f"workspace {ws.root} does not exist any more")
    key = str(ws.db_path)
    try:
        ino = os.stat(key).st_ino
    except OSError:
        ino = -1
    with _CONNS_LOCK:
        cached = _CONNS.get(key)
        if cached is None or cached[2] != ino or ino == -1:
            if cached is not None:
                with cached[1], contextlib.suppress(sqlite3.Error):
                    cached[0].close()
            conn = db.connect(ws.db_path)
            _ensure_schema(conn)
            cached = (conn, threading.Lock(), os.stat(key).st_ino)
            _CONNS[key] = cached
    conn, lock, _ = cached
    with lock:
        yield conn


def close_connections() -> None:
    """Close every cached database connection (tests, shutdown)."""
    with _CONNS_LOCK:
        for conn, lock, _ in _CONNS.values():
            with lock, contextlib.suppress(sqlite3.Error):
                conn.close()
        _CONNS.clear()


def load_state(ws: Workspace, job: str) -> JobState:
    """The persisted state of ``job`` (a fresh, unsaved one when never seen)."""
    with _conn(ws) as conn:
        row = conn.execute("SELECT * FROM schedule_state WHERE job = ?", (job,)).fetchone()
    return _row_state(row) if row else JobState(job=job)


def load_states(ws: Workspace) -> dict[str, JobState]:
    with _conn(ws) as conn:
        rows = conn.execute("SELECT * FROM schedule_state").fetchall()
    return {r["job"]: _row_state(r) for r in rows}


def _row_state(row: sqlite3.Row) -> JobState:
    kw: dict[str, Any] = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row
    for k in _DT_FIELDS:
        kw[k] = parse_iso(kw[k])
    kw["last_result"] = json.loads(kw["last_result"]) if kw["last_result"] else None
    kw["running"] = bool(kw["running"])
    return JobState(**kw)


def save_state(ws: Workspace, state: JobState) -> None:
    """Insert or replace the state row of ``state.job``."""
    vals = asdict(state)
    for k in _DT_FIELDS:
        vals[k] = iso_ms(vals[k]) if vals[k] else None
    vals["last_result"] = (
        json.dumps(vals["last_result"], default=str) if vals["last_result"] is not None else None
    )
    vals["running"] = int(vals["running"])
    cols = ", ".join(vals)
    marks = ", ".join("?" for _ in vals)
    with _conn(ws) as conn:
        conn.execute(
            f"INSERT OR REPLACE INTO schedule_state ({cols}) VALUES ({marks})", tuple(vals.values())
        )


def recent_runs(ws: Workspace, limit: int = 20, job: str | None = None) -> list[dict[str, Any]]:
    """The latest runs, newest first, as JSON-ready dicts."""
    sql = "SELECT * FROM schedule_runs"
    args: tuple[Any, ...] = ()
    if job:
        sql += " WHERE job = ?"
        args = (job,)
    sql += " ORDER BY id DESC LIMIT ?"
    with _conn(ws) as conn:
        rows = conn.execute(sql, (*args, int(limit))).fetchall()
    return [
        {
            "id": r["id"],
            "job": r["job"],
            "trigger": r["trigger"],
            "slot": r["slot"],
            "startedAt": r["started_at"],
            "finishedAt": r["finished_at"],
            "durationMs": r["duration_ms"],
            "status": r["status"],
            "result": json.loads(r["result"]) if r["result"] else None,
            "error": r["error"],
            "sizes": json.loads(r["sizes"]) if r["sizes"] else None,
        }
        for r in rows
    ]


def _start_run(ws: Workspace, job: str, trigger: str, slot: datetime | None, now: datetime) -> int:
    with _conn(ws) as conn:
        cur = conn.execute(
            "INSERT INTO schedule_runs (job, trigger, slot, started_at, status) "
            "VALUES (?, ?, ?, ?, 'running')",
            (job, trigger, iso_ms(slot) if slot else None, iso_ms(now)),
        )
        run_id = int(cur.lastrowid or 0)
        conn.execute(
            "DELETE FROM schedule_runs WHERE job = ? AND id <= ?", (job, run_id - MAX_RUNS_KEPT)
        )
    return run_id


def _finish_run(
    ws: Workspace,
    run_id: int,
    status: str,
    result: dict[str, Any] | None,
    error: str | None,
    started: datetime,
    finished: datetime,
) -> int:
    ms = int((finished - started).total_seconds() * 1000)
    with _conn(ws) as conn:
        conn.execute(
            "UPDATE schedule_runs SET finished_at = ?, duration_ms = ?, status = ?, "
            "result = ?, error = ? WHERE id = ?",
            (
                iso_ms(finished),
                ms,
                status,
                json.dumps(result, default=str) if result is not None else None,
                error,
                run_id,
            ),
        )
    return ms


def set_run_sizes(ws: Workspace, run_id: int, sizes: dict[str, Any]) -> None:
    """Keep the recall store's and MEMORY.md's sizes after run ``run_id`` (the page's charts)."""
    with _conn(ws) as conn:
        conn.execute("UPDATE schedule_runs SET sizes = ? WHERE id = ?", (json.dumps(sizes), run_id))


def claim_slot(ws: Workspace, job: str, slot: datetime, owner: str, now: datetime) -> bool:
    """Claim ``job``'s ``slot`` for ``owner`` in the workspace database; False when another
    gateway (or an earlier run of this one) claimed it first. Two gateways serving one
    workspace therefore never run the same slot twice."""
    with _conn(ws) as conn:
        cur = conn.execute(
            "INSERT OR IGNORE INTO schedule_claims (job, slot, owner, claimed_at) "
            "VALUES (?, ?, ?, ?)",
            (job, iso_ms(slot), owner, iso_ms(now)),
        )
        if cur.rowcount:
            conn.execute(
                "DELETE FROM schedule_claims WHERE job = ? AND rowid <= "
                "(SELECT max(rowid) FROM schedule_claims) - ?",
                (job, MAX_CLAIMS_KEPT),
            )
        return bool(cur.rowcount)


def register_instance(
    ws: Workspace, ident: str, pid: int, address: str, now: datetime
) -> list[dict[str, Any]]:
    """Record a gateway serving ``ws``; return the other gateways that serve it now (their
    process alive). Rows of dead processes are removed."""
    from memcore.workspace.core import pid_alive

    with _conn(ws) as conn:
        rows = conn.execute("SELECT id, pid, address, started_at FROM gateway_instances").fetchall()
        others = []
        for r in rows:
            if r["id"] == ident:
                continue
            if not pid_alive(int(r["pid"])):
                conn.execute("DELETE FROM gateway_instances WHERE id = ?", (r["id"],))
                continue
            others.append({"pid": r["pid"], "address": r["address"], "startedAt": r["started_at"]})
        conn.execute(
            "INSERT OR REPLACE INTO gateway_instances (id, pid, address, started_at) "
            "VALUES (?, ?, ?, ?)",
            (ident, pid, address, iso_ms(now)),
        )
    return others


def unregister_instance(ws: Workspace, ident: str) -> None:
    with _conn(ws) as conn:
        conn.execute("DELETE FROM gateway_instances WHERE id = ?", (ident,))


def mark_interrupted(ws: Workspace, now: datetime) -> int:
    """Record every run still marked running as interrupted (shutdown, or a crash before)."""
    with _conn(ws) as conn:
        cur = conn.execute(
            "UPDATE schedule_runs SET status = 'interrupted', finished_at = ?, "
            "error = coalesce(error, 'interrupted: the gateway stopped during the run') "
            "WHERE status = 'running'",
            (iso_ms(now),),
        )
        conn.execute(
            "UPDATE schedule_state SET running = 0, last_status = 'interrupted' WHERE running = 1"
        )
        return cur.rowcount


# -- running a job --------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
