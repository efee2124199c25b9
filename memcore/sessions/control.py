"""Stopping session-dream runs: from a signal, a gateway stop or ``memcore sessions stop``.

A run checks ``checkpoint`` before and after every model call and between sessions: when a
stop was asked (this process's stop event, or ``stop_requested`` on its row in ``sess_runs``,
set by another process) it raises RunStopped. The run then records itself ``stopped``, keeps
what it had published, releases its leases, and no answer that arrives after the stop is
published. A SIGTERM that lands while a model call is in flight ends the call at once.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from memcore.errors import RunStopped
from memcore.sessions.store import transaction
from memcore.workspace.clock import iso_ms

_stopped: dict[str, str] = {}  # workspace root -> why its runs in this process must stop
_lock = threading.Lock()


def ensure_control_columns(conn: sqlite3.Connection) -> None:
    """Add ``stop_requested``, ``scope`` and ``progress`` to a runs table made before them."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sess_runs)")}
    for col in ("stop_requested", "scope", "progress"):
        if col not in cols:
            try:
                conn.execute(f"ALTER TABLE sess_runs ADD COLUMN {col} TEXT")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc).lower():
                    raise


def _key(root: Path) -> str:
    return str(root.resolve())


def stop_all(roots: list[Path], reason: str = "the gateway is stopping") -> None:
    """Ask every run of these workspaces in this process to stop at its next checkpoint."""
    with _lock:
        for root in roots:
            _stopped[_key(root)] = reason


def clear_stop_all(roots: list[Path]) -> None:
    """Let runs of these workspaces start again (a gateway started after a stop)."""
    with _lock:
        for root in roots:
            _stopped.pop(_key(root), None)


def request_stop(conn: sqlite3.Connection, run_id: str, reason: str) -> bool:
    """Ask the running run ``run_id`` (any process) to stop; False when it is not running."""
    ensure_control_columns(conn)
    with transaction(conn):
        cur = conn.execute(
            "UPDATE sess_runs SET stop_requested=? WHERE id=? AND status='running'",
            (reason, run_id),
        )
    return cur.rowcount > 0


def checker(
    conn: sqlite3.Connection, run_id: str, root: Path, event: threading.Event | None = None
) -> Callable[[], None]:
    """The run's checkpoint: raises RunStopped when a stop was asked."""
    ensure_control_columns(conn)
    key = _key(root)

    def check() -> None:
        if event is not None and event.is_set():
            raise RunStopped(f"stopped: {getattr(event, 'reason', 'asked to stop')}")
        reason = _stopped.get(key)
        if reason is not None:
            raise RunStopped(f"stopped: {reason}")
        row = conn.execute("SELECT stop_requested FROM sess_runs WHERE id=?", (run_id,)).fetchone()
        if row is not None and row[0]:
            raise RunStopped(f"stopped: {row[0]}")

    return check


class StopEvent(threading.Event):
    """A stop event that says why (``reason``) and whether a model call is in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.reason = "asked to stop"
        self.in_call = False

    def stop(self, reason: str) -> None:
        self.reason = reason
        self.set()


@contextmanager
def stop_on_sigterm(event: StopEvent) -> Iterator[None]:
    """While inside, SIGTERM (and SIGHUP) stop the run: the event is set, and a model call in
    flight is ended at once by raising RunStopped from the handler (the run's own handling
    records the stop). Outside the main thread this does nothing."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        event.stop(f"received {signal.Signals(signum).name}")
        if event.in_call:
            raise RunStopped(f"stopped: received {signal.Signals(signum).name}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# -- jobs: the runs as a user sees them ---------------------------------------------------

RUNS_KEPT_DAYS = 30  # run records older than this are pruned when a run finishes


def jobs(
    conn: sqlite3.Connection, limit: int = 20, now: datetime | None = None
) -> list[dict[str, object]]:
    """Recent runs, running first: scope, status, progress (sessions done / total, calls,
    tokens), failure reason, and whether a stop was asked. With ``now``, runs older than the
    30 days records are kept are not listed (the next finished run deletes them).

    A finished ``ok`` run has no checklist left (it is cleared when it completes): its
    progress is what its report says was read."""
    import json

    ensure_control_columns(conn)
    since = "" if now is None else iso_ms(now - timedelta(days=RUNS_KEPT_DAYS))
    rows = conn.execute(
        "SELECT * FROM sess_runs WHERE status = 'running' OR started_at >= ?"
        " ORDER BY status = 'running' DESC, started_at DESC, rowid DESC LIMIT ?",
        (since, limit),
    ).fetchall()
    out: list[dict[str, object]] = []
    for r in rows:
        report = json.loads(r["report"]) if r["report"] else {}
        progress = json.loads(r["progress"]) if r["progress"] else {}
        if not progress and r["status"] == "ok":
            n = len(report.get("read") or [])
            progress = {"step": "done", "done": n, "total": n}
        tokens = report.get("tokens") or {}
        out.append(
            {
                "id": r["id"],
                "status": r["status"],
                "trigger": r["trigger"],
                "scope": json.loads(r["scope"]) if r["scope"] else {},
                "started_at": r["started_at"],
                "finished_at": r["finished_at"],
                "progress": progress,
                "calls": tokens.get("calls", progress.get("calls", 0)),
                "tokens": tokens.get("charged", progress.get("tokens", 0)),
                "error": r["error"],
                "stop_requested": r["stop_requested"],
            }
        )
    return out


def job(conn: sqlite3.Connection, run_id: str) -> dict[str, object]:
    """One run by id (a unique prefix is enough); InputError when there is none."""
    from memcore.errors import InputError

    ensure_control_columns(conn)
    rows = conn.execute(
        "SELECT id FROM sess_runs WHERE id LIKE ? ESCAPE '\\'",
        (run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
    ).fetchall()
    if len(rows) != 1:
        what = "no session dream" if not rows else f"{len(rows)} session dreams"
        raise InputError(f"{run_id!r}: {what} with that id; see `memcore sessions jobs`")
    full = rows[0][0]
    return next(j for j in jobs(conn, 10_000) if j["id"] == full)


def usage_today(budget: int, now: datetime) -> dict[str, object]:
    """Today's use of the user's one token budget (every workspace and the gateway charge it),
    with the UTC day's bounds: the budget resets at 00:00 UTC, whatever the local time."""
    from memcore.sessions.budget import budget_status, next_reset
    from memcore.sessions.userdb import open_user_db

    user = open_user_db()
    try:
        out: dict[str, object] = dict(budget_status(user, budget, now).as_dict())
    finally:
        user.close()
    reset = next_reset(now)
    out["day_starts_at"] = iso_ms(reset - timedelta(days=1))
    out["resets_at"] = iso_ms(reset)
    return out
