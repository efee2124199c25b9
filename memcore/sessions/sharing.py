"""Leaving sharing: sessions that left the project memory they were folded into.

A project memory is built from the shared sessions it has seen (``sess_uplinks``). When one
of them is made independent, is deleted or turns unreadable, the project memory (and the
global memory, which folded the project in) still carries what came from it. Until a run
rebuilds them without it, ``memcore context`` and the MCP ``context`` tool do not inject them
(``recall`` still reads them on request), and ``sessions status`` says why. The run rebuilds
the project memory from the remaining shared sessions alone, then the global memory from the
latest projects alone.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memcore.sessions.catalog import all_sessions
from memcore.sessions.store import get_state, set_state, transaction, uplinks
from memcore.workspace.core import Workspace

GLOBAL_REBUILD_KEY = "global_rebuild"  # in the user database: projects that left or rebuilt


@dataclass(frozen=True)
class Leaver:
    session: str
    why: str  # independent | missing | unreadable

    def as_dict(self) -> dict[str, str]:
        return {"session": self.session, "why": self.why}


def leavers(conn: sqlite3.Connection, project: str) -> list[Leaver]:
    """Sessions folded into ``project`` that are no longer shared, present and readable."""
    seen = [c.split(":", 1)[1] for c in uplinks(conn, "project", project) if ":" in c]
    info = {s.id: s for s in all_sessions(conn)}
    out = []
    for sid in sorted(seen):
        s = info.get(sid)
        if s is None or s.status == "missing":
            out.append(Leaver(sid, "missing"))
        elif s.status != "ok":
            out.append(Leaver(sid, "unreadable"))
        elif s.independent:
            out.append(Leaver(sid, "independent"))
    return out


def forget_leavers(conn: sqlite3.Connection, project: str, gone: list[Leaver]) -> None:
    """After the rebuild: the project no longer counts them as seen (call in a transaction)."""
    conn.executemany(
        "DELETE FROM sess_uplinks WHERE level='project' AND owner=? AND child=?",
        [(project, f"session:{g.session}") for g in gone],
    )


def global_marks(user: sqlite3.Connection) -> dict[str, str]:
    """Projects the global memory may still carry departed sessions of: ``tainted`` (the
    project has leavers, not rebuilt yet) or ``rebuilt`` (the global must be made again)."""
    out: dict[str, str] = {}
    for part in (get_state(user, GLOBAL_REBUILD_KEY) or "").split(","):
        pid, _, state = part.partition("=")
        if pid and state in ("tainted", "rebuilt"):
            out[pid] = state
    return out


def _write(user: sqlite3.Connection, marks: dict[str, str]) -> None:
    set_state(user, GLOBAL_REBUILD_KEY, ",".join(f"{p}={v}" for p, v in sorted(marks.items())))


def mark_project(user: sqlite3.Connection, project: str, state: str) -> None:
    """Record that ``project`` has leavers (``tainted``) or was rebuilt (``rebuilt``)."""
    with transaction(user):
        marks = global_marks(user)
        if marks.get(project) == state:
            return
        marks[project] = state
        _write(user, marks)


def untaint(user: sqlite3.Connection, project: str) -> None:
    """``project`` has no leavers now but was marked ``tainted`` (a session went and came back
    before any run rebuilt it): what the global memory folded in came from shared sessions
    only, so the mark goes. A ``rebuilt`` mark stays (the global still has to be made)."""
    with transaction(user):
        marks = global_marks(user)
        if marks.get(project) != "tainted":
            return
        del marks[project]
        _write(user, marks)


def clear_rebuilt(user: sqlite3.Connection, projects: list[str]) -> None:
    """Call inside the transaction that publishes the global memory rebuilt without them."""
    marks = global_marks(user)
    for p in projects:
        if marks.get(p) == "rebuilt":
            del marks[p]
    _write(user, marks)


def withheld(ws: Workspace) -> dict[str, list[dict[str, str]]]:
    """What ``context`` must not inject now: ``{"project": [leavers], "global": [projects]}``.

    Scans the sessions folder first (a deleted, unreadable or newly independent session is
    noticed here, before any run), and tells the user database when this project has
    leavers, so every workspace withholds the global memory until it is rebuilt."""
    from memcore.sessions import catalog
    from memcore.sessions.settings import project_id, sessions_settings
    from memcore.sessions.store import ensure_schema
    from memcore.sessions.userdb import open_user_db
    from memcore.workspace.config import load_config
    from memcore.workspace.db import connect

    pid = project_id(ws)
    gone: list[Leaver] = []
    known = ws.db_path.exists()
    if known:
        conn = connect(ws.db_path)
        try:
            ensure_schema(conn)
            catalog.scan(ws, conn, sessions_settings(load_config(ws)))
            gone = leavers(conn, pid)
        finally:
            conn.close()
    user = open_user_db()
    try:
        if gone:
            mark_project(user, pid, "tainted")
        elif known:
            untaint(user, pid)
        marks = global_marks(user)
    finally:
        user.close()
    return {
        "project": [g.as_dict() for g in gone],
        "global": [{"project": p, "state": st} for p, st in sorted(marks.items())],
    }
