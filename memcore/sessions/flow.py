"""Up the hierarchy: project short memory from changed session memories, global short memory
from changed project memories. Only versions a level has not seen flow up (``sess_uplinks``);
no change means no model call.

The global level lives in the user data directory (``global.sqlite``, same tables), shared by
every workspace of the user; each workspace mirrors its latest project version there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcore.errors import SourceChanged
from memcore.sessions.calls import Caller
from memcore.sessions.prompts import RequestSource
from memcore.sessions.store import (
    Source,
    Version,
    get_version,
    insert_version,
    latest,
    publish_version,
    set_uplink,
    transaction,
    uplinks,
)
from memcore.sessions.userdb import USER_DB_NAME as USER_DB_NAME
from memcore.sessions.userdb import open_user_db as open_user_db


def child_key(v: Version) -> str:
    return f"{v.level}:{v.owner}"


def changed_children(
    conn: sqlite3.Connection, level: str, owner: str, children: list[Version]
) -> list[Version]:
    seen = uplinks(conn, level, owner)
    return [c for c in children if seen.get(child_key(c)) != c.version]


def flow_up(
    caller: Caller,
    conn: sqlite3.Connection,
    level: str,
    owner: str,
    children: list[Version],
    limit: int,
    *,
    now_iso: str,
    before_publish: Callable[[], None],
    health: dict[str, Any] | None = None,
    rebuild: bool = False,
) -> list[str]:
    """Fold changed ``children`` into the ``level`` memory of ``owner``; the refs written.

    ``before_publish`` runs inside the publishing transaction (the lease check). With
    ``rebuild`` the memory is made again from ``children`` alone, starting from nothing (a
    source left sharing: what came from it must go)."""
    changed = list(children) if rebuild else changed_children(conn, level, owner, children)
    written: list[str] = []
    if rebuild and not changed:  # nothing is left to build from: an empty version
        cur = latest(conn, level, owner)
        if cur is not None and cur.text:
            with transaction(conn):
                before_publish()
                v = insert_version(
                    conn, level, owner, "", [], now_iso=now_iso, run_id=caller.run_id, model=None
                )
            written.append(v.ref)
        return written
    if not changed:
        return []
    by_id = {f"m{i + 1}": c for i, c in enumerate(changed)}
    sources = [RequestSource(sid, "memory", c.ref, c.text) for sid, c in by_id.items()]
    pending = sources
    fresh = rebuild
    while pending:  # each call is packed against the memory as it stands before it
        cur = latest(conn, level, owner)
        base = None if fresh else cur
        fresh = False
        batch = caller.next_batch(
            level, limit, base.ref if base else None, base.text if base else "", pending, health
        )
        pending = pending[len(batch) :]
        text, _used = caller.run(
            level, limit, base.ref if base else None, base.text if base else "", batch, health
        )
        with transaction(conn):
            before_publish()
            now_cur = latest(conn, level, owner)
            if (now_cur.version if now_cur else 0) != (cur.version if cur else 0):
                raise SourceChanged(f"the {level} memory changed under the run; try again")
            for s in batch:
                child = by_id[s.id]
                if (
                    get_version(conn, child.level, child.owner, child.version) is None
                    and level != "global"
                ):
                    raise SourceChanged(f"{child.ref} disappeared under the run")
            if cur is None or text != cur.text:
                srcs = [Source("memory", s.ref, preview=by_id[s.id].text[:200]) for s in batch]
                if base is not None:
                    srcs.insert(0, Source("previous", base.ref, preview=base.text[:200]))
                v, new = publish_version(
                    conn,
                    level,
                    owner,
                    text,
                    srcs,
                    now_iso=now_iso,
                    run_id=caller.run_id,
                    model=caller.llm.name,
                )
                if new:
                    written.append(v.ref)
            for s in batch:
                child = by_id[s.id]
                set_uplink(conn, level, owner, child_key(child), child.version)
    return written


def mirror_project(
    user: sqlite3.Connection, project: Version, workspace: Path, name: str, now_iso: str
) -> None:
    """Copy the workspace's latest project version into the user database (idempotent)."""
    with transaction(user):
        user.execute(
            "INSERT INTO sess_projects (id, workspace, name, updated_at) VALUES (?,?,?,?)"
            " ON CONFLICT (id) DO UPDATE SET workspace=excluded.workspace, name=excluded.name,"
            " updated_at=excluded.updated_at",
            (project.owner, str(workspace), name, now_iso),
        )
        if get_version(user, "project", project.owner, project.version) is None:
            user.execute(
                "INSERT INTO sess_memories (level, owner, version, text, created_at, run_id, model)"
                " VALUES ('project', ?, ?, ?, ?, NULL, ?)",
                (project.owner, project.version, project.text, project.created_at, project.model),
            )


def latest_projects(user: sqlite3.Connection) -> list[Version]:
    from memcore.sessions.store import latest_all

    return latest_all(user, "project")
