"""Session dreaming: finished sessions into session, project and global short memories.

Public entry points: ``dream`` (a run, manual or automatic with its gates), ``due`` (the
automatic gates), ``status`` (candidates, budget, lease and the last run report); the other names
in ``__all__`` load their submodule on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memcore._lazy import lazy_exports
from memcore.workspace.core import Workspace
from memcore.workspace.progress import Progress

if TYPE_CHECKING:
    import sqlite3

    from memcore.sessions.context import context_block
    from memcore.sessions.health import format_health, health_report
    from memcore.sessions.recall_api import recall
    from memcore.sessions.run import execute
    from memcore.sessions.settings import SessionsSettings, project_id, sessions_settings
    from memcore.sessions.transcripts import read_transcript

FAILURE_BACKOFF = timedelta(hours=1)

__all__ = [
    "FAILURE_BACKOFF",
    "Gate",
    "SessionsSettings",
    "context_block",
    "dream",
    "due",
    "execute",
    "format_health",
    "health_report",
    "project_id",
    "read_transcript",
    "recall",
    "sessions_settings",
    "status",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "context": ("context_block",),
        "health": ("format_health", "health_report"),
        "recall_api": ("recall",),
        "run": ("execute",),
        "settings": ("SessionsSettings", "project_id", "sessions_settings"),
        "transcripts": ("read_transcript",),
    },
)


@dataclass(frozen=True)
class Gate:
    due: bool
    reason: str
    candidates: int


def _open(ws: Workspace) -> sqlite3.Connection:
    from memcore.sessions.store import ensure_schema
    from memcore.workspace.db import connect

    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    return conn


def _budget_blocked(budget: int, now: datetime) -> bool:
    """Whether the user's ledger has nothing left today (any workspace spent it)."""
    from memcore.sessions.budget import budget_status, day_of
    from memcore.sessions.store import get_state
    from memcore.sessions.userdb import open_user_db

    user = open_user_db()
    try:
        if get_state(user, "budget_blocked_day") == day_of(now):
            return True
        return budget_status(user, budget, now).remaining <= 0
    finally:
        user.close()


def due(ws: Workspace, now: datetime, settings: SessionsSettings | None = None) -> Gate:
    """Whether an automatic run should start now: enabled, enough candidates, the interval
    since the last success, no failure within the last hour, budget left today. ``settings``
    replaces ``[sessions]`` of memcore.toml (the last good ones while it is invalid)."""
    from memcore.sessions import catalog
    from memcore.sessions.settings import sessions_settings
    from memcore.sessions.store import get_state
    from memcore.workspace.clock import parse_iso
    from memcore.workspace.config import load_config

    settings = settings or sessions_settings(load_config(ws))
    if not settings.enabled:
        return Gate(False, "session dreaming is disabled ([sessions] enabled = false)", 0)
    conn = _open(ws)
    try:
        sessions = catalog.scan(ws, conn, settings)
        n = len(catalog.candidates(conn, sessions))
        for key, what in (("last_failure_at", "a failed"), ("last_stopped_at", "a stopped")):
            at = parse_iso(get_state(conn, key))
            if at is not None and now < at + FAILURE_BACKOFF:
                return Gate(
                    False,
                    f"backing off after {what} run until {at + FAILURE_BACKOFF:%H:%M} UTC",
                    n,
                )
        if _budget_blocked(settings.daily_token_budget, now):
            return Gate(
                False,
                "today's token budget (shared by the user's workspaces) is used up;"
                " waiting for 00:00 UTC",
                n,
            )
        if n < settings.min_sessions:
            return Gate(False, f"{n} candidate sessions, {settings.min_sessions} needed", n)
        success = parse_iso(get_state(conn, "last_success_at"))
        if success is not None and now < success + timedelta(days=settings.interval_days):
            return Gate(
                False,
                f"last successful run {success:%Y-%m-%d}; interval {settings.interval_days} days",
                n,
            )
        return Gate(True, f"{n} candidate sessions", n)
    finally:
        conn.close()


def dream(
    ws: Workspace,
    *,
    now: datetime,
    automatic: bool = False,
    llm: Any = None,
    clock: Callable[[], datetime] | None = None,
    progress: Progress | None = None,
    stop: Any = None,
    session: str | None = None,
    project: str | None = None,
    settings: SessionsSettings | None = None,
) -> dict[str, Any]:
    """Run a session dream. A manual run ignores the interval and the count, never the lease
    (LockBusy). An automatic run first checks ``due``; when not due it returns a report with
    status ``skipped`` and the reason. ``progress`` follows the sessions read; ``stop`` (a
    ``control.StopEvent``) stops it at its next checkpoint. ``session`` / ``project`` limit
    the run to one scope (see ``execute``). ``settings`` replaces ``[sessions]`` of
    memcore.toml (the scheduler passes the last good ones while the file is invalid)."""
    from memcore.sessions.health import health_report
    from memcore.sessions.run import execute

    if automatic:
        gate = due(ws, now, settings)
        if not gate.due:
            return {"status": "skipped", "reason": gate.reason, "candidates": gate.candidates}
    health = health_report(ws, compact=True, settings=settings)
    return execute(
        ws,
        now=now,
        trigger="auto" if automatic else "manual",
        llm=llm,
        clock=clock,
        health=health,
        progress=progress,
        stop=stop,
        session=session,
        project=project,
        settings=settings,
    )


def _budget(conn: sqlite3.Connection, ws: Workspace, budget: int, now: datetime) -> dict[str, Any]:
    """Today's use of the user's one budget (every workspace and the gateway charge it)."""
    from memcore.sessions.budget import budget_status
    from memcore.sessions.userdb import migrate_ledger, open_user_db

    user = open_user_db()
    try:
        migrate_ledger(conn, user, str(ws.root))
        return dict(budget_status(user, budget, now).as_dict())
    finally:
        user.close()


def _quarantines(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Times memcore.sqlite or the user database was set aside as corrupt, each with what
    came across, what was lost and how to restore the old file."""
    from memcore.sessions.userdb import open_user_db
    from memcore.workspace.db import quarantines, restore_hint

    out = []
    user = open_user_db()
    try:
        for db_conn in (conn, user):
            path = db_conn.execute("PRAGMA database_list").fetchone()[2]
            for q in quarantines(db_conn):
                out.append({"database": path, **q, "restore": restore_hint(path, q["aside"])})
    finally:
        user.close()
    return out


def status(ws: Workspace, now: datetime | None = None) -> dict[str, Any]:
    """Candidates, unreadable sessions, sessions of no project (``unsorted``: a transcript of
    a whole projects root with no ``cwd``, each with its warning), budget, lease, gate and the
    last run report."""
    from memcore.sessions import catalog
    from memcore.sessions.lease import lease_holder
    from memcore.sessions.settings import project_id, sessions_settings
    from memcore.sessions.store import get_state, last_run
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    now = now or utcnow()
    settings = sessions_settings(load_config(ws))
    conn = _open(ws)
    try:
        lost: list[dict[str, str]] = []
        sessions = catalog.scan(ws, conn, settings, unsorted=lost)
        cands = catalog.candidates(conn, sessions)
        out = {
            "enabled": settings.enabled,
            "project": project_id(ws),
            "sessions_dir": str(settings.sessions_dir(ws)),
            "sessions": len(sessions),
            "candidates": [s.id for s in cands],
            "unreadable": [
                {"session": s.id, "error": s.error} for s in sessions if s.status == "unreadable"
            ],
            "unsupported": [
                {"session": s.id, "format": s.format, "error": s.error}
                for s in sessions
                if s.status == "unsupported"
            ],
            "broken_lines": [
                {"session": s.id, "file": str(s.path), "lines": list(s.broken)}
                for s in sessions
                if s.broken and s.status == "ok"
            ],
            "independent": [s.id for s in sessions if s.independent],
            "unsorted": lost,
            "budget": _budget(conn, ws, settings.daily_token_budget, now),
            "lease": lease_holder(conn, now),
            "last_success_at": get_state(conn, "last_success_at"),
            "last_failure_at": get_state(conn, "last_failure_at"),
            "last_stopped_at": get_state(conn, "last_stopped_at"),
            "last_run": last_run(conn),
            "database": _quarantines(conn),
        }
        from memcore.sessions.sharing import withheld

        out["withheld"] = withheld(ws)
    finally:
        conn.close()
    if settings.enabled:
        gate = due(ws, now)
        out["next"] = {"due": gate.due, "reason": gate.reason}
    else:
        out["next"] = {
            "due": False,
            "reason": "session dreaming is disabled ([sessions] enabled = false)",
        }
    return out
