"""Correcting short memories by hand: ``memcore recall … --edit`` (``edit``: a new version with
the text the user wrote, undone by ``memcore undo ID``) and ``memcore sessions forget REF
--text TEXT``.

Forgetting publishes a new version of the memory without the lines that hold ``TEXT`` (old
versions stay, as every version is immutable). A purge goes further, for a secret or a
private detail found later: the text is replaced by ``[purged]`` in every version of every
level that holds it (the workspace and the user database), in the source previews, in the
decision records' quotes, in the
exports in ``memory/summaries/`` and in the journal's copies of earlier exports. The
transcripts themselves are the user's files and are left alone (the result says so). The
export rewrite is one journaled run; the result lists everything that was changed.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from memcore.errors import InputError
from memcore.redact import redact
from memcore.sessions import decisions
from memcore.sessions.store import (
    Source,
    ensure_schema,
    get_version,
    insert_version,
    latest,
    memory_ref,
    parse_memory_ref,
    transaction,
)
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect

PURGED = "[purged]"
_LATEST = re.compile(r"^(session|project):(.+)$|^global$")


def _target(ref: str) -> tuple[str, str, int | None]:
    """``session:ID@vN`` / ``project:ID@vN`` / ``global@vN``, or without ``@vN`` (latest)."""
    m = _LATEST.match(ref.strip())
    if m and "@v" not in ref:
        return (m.group(1) or "global", m.group(2) or "", None)
    level, owner, version = parse_memory_ref(ref)
    return level, owner, version


def _owner(db: sqlite3.Connection, level: str, owner: str) -> str:
    """The session a short name of it means (its uuid, the start of its id); other levels'
    owners as given."""
    if level != "session":
        return owner
    from memcore.sessions.catalog import match_session

    ids = [
        r[0] for r in db.execute("SELECT DISTINCT owner FROM sess_memories WHERE level='session'")
    ]
    return match_session(ids, owner) or owner


def _purge_db(db: sqlite3.Connection, text: str) -> tuple[list[str], int]:
    """Replace ``text`` in every version, source preview and decision quote; (refs changed:
    memory versions and ``decision:N``, previews changed)."""
    refs: list[str] = []
    with transaction(db):
        rows = db.execute(
            "SELECT id, level, owner, version FROM sess_memories WHERE instr(text, ?) > 0"
            " ORDER BY level, owner, version",
            (text,),
        ).fetchall()
        for r in rows:
            db.execute(
                "UPDATE sess_memories SET text = replace(text, ?, ?) WHERE id = ?",
                (text, PURGED, r["id"]),
            )
            refs.append(memory_ref(r["level"], r["owner"], r["version"]))
        cur = db.execute(
            "UPDATE sess_memory_sources SET preview = replace(preview, ?, ?)"
            " WHERE instr(preview, ?) > 0",
            (text, PURGED, text),
        )
        refs += decisions.purge(db, text, PURGED)
    return refs, cur.rowcount


def _purge_journal_copies(conn: sqlite3.Connection, text: str) -> int:
    """Scrub the journal's copies of earlier exports (undo then restores scrubbed files)."""
    try:
        shas = {
            sha
            for row in conn.execute(
                "SELECT before_sha1, after_sha1 FROM journal_files"
                " WHERE path LIKE 'memory/summaries/%' OR path LIKE '%/summaries/%'"
            )
            for sha in row
            if sha
        }
    except sqlite3.Error:
        return 0
    needle = text.encode("utf-8")
    n = 0
    with transaction(conn):
        for sha in shas:
            row = conn.execute("SELECT data FROM journal_blobs WHERE sha1 = ?", (sha,)).fetchone()
            if row is None:
                continue
            data = zlib.decompress(row[0])
            if needle in data:
                data = data.replace(needle, PURGED.encode())
                conn.execute(
                    "UPDATE journal_blobs SET data = ?, size = ? WHERE sha1 = ?",
                    (zlib.compress(data, 6), len(data), sha),
                )
                n += 1
    return n


def forget(
    ws: Workspace, ref: str, text: str, *, purge: bool = False, now: datetime
) -> dict[str, Any]:
    """Publish a new version of ``ref`` without the lines holding ``text``; with ``purge``,
    also remove ``text`` from every older version, preview, export and export copy. Holds the
    session lease (LockBusy while a dream runs); a new version is recorded like a hand edit, so
    ``memcore undo ID`` brings the lines back (after a purge, with the text purged)."""
    from memcore.sessions.export import export_summaries

    if not text.strip():
        raise InputError("--text is empty; give the text to forget (at least one character)")
    level, owner, _version = _target(ref)
    ws.ensure_dreams_dir()
    with _databases(ws, lease_at=now) as (conn, user):
        target = user if level == "global" else conn
        owner = _owner(target, level, owner)
        cur = latest(target, level, owner)
        if cur is None:
            raise InputError(f"{ref!r}: no such short memory; see `memcore recall {level}s`")
        kept = [line for line in cur.text.splitlines() if text not in line]
        removed = len(cur.text.splitlines()) - len(kept)
        if not removed and not purge:
            raise InputError(
                f"{ref!r}: the text {text!r} is not in its latest version {cur.ref};"
                " nothing to forget (--purge removes it from older versions too)"
            )
        out: dict[str, Any] = {"memory": cur.ref, "removed_lines": removed, "version": None}
        v = None
        if removed:
            with transaction(target):
                v = insert_version(
                    target,
                    level,
                    owner,
                    "\n".join(kept),
                    [Source("previous", cur.ref, preview=redact(cur.text).replace(text, PURGED))],
                    now_iso=iso_ms(now),
                    run_id="forget",
                    model="by hand",
                )
            out["version"] = v.ref
        if purge:
            refs, previews = [], 0
            for db in (conn, user):
                r, p = _purge_db(db, text)
                refs += [x for x in r if x not in refs]
                previews += p
            out["purged_versions"] = [r for r in refs if not r.startswith("decision:")]
            out["purged_decisions"] = [r for r in refs if r.startswith("decision:")]
            out["purged_previews"] = previews
            out["left_alone"] = "the session transcripts (the user's own files)"
        files, run_id = export_summaries(ws, conn, now=now, trigger="command")
        out["exports"] = files
        out["journal_run"] = run_id
        if v is not None:  # undoable like a hand edit: the text before comes back
            out["edit"] = _record_edit(target, run_id, level, owner, cur.version, v.version, now)
            out["undo"] = f"memcore undo {out['edit']}"
        if purge:  # after the export: its journal run keeps a copy of the files it replaced
            out["purged_journal_copies"] = _purge_journal_copies(conn, text)
        return out


def _record_edit(
    db: sqlite3.Connection,
    run_id: str | None,
    level: str,
    owner: str,
    before: int,
    after: int,
    now: datetime,
) -> str:
    """Remember a correction by hand (its id: the export's journal run, else a fresh one) so
    ``memcore undo ID`` brings the text before it back (``undo_edit``)."""
    edit_id = run_id or f"edit-{uuid.uuid4().hex[:12]}"
    with transaction(db):
        db.execute(
            "INSERT INTO sess_edits (id, level, owner, before_version, after_version,"
            " journal_run, created_at) VALUES (?,?,?,?,?,?,?)",
            (edit_id, level, owner, before, after, run_id, iso_ms(now)),
        )
    return edit_id


# -- correcting by hand -------------------------------------------------------------------


def _limit(ws: Workspace, level: str) -> int:
    from memcore.sessions.settings import sessions_settings
    from memcore.workspace.config import load_config

    s = sessions_settings(load_config(ws))
    return {"session": s.session_limit, "project": s.project_limit, "global": s.global_limit}[level]


@contextmanager
def _databases(
    ws: Workspace, *, lease_at: datetime | None = None
) -> Iterator[tuple[sqlite3.Connection, sqlite3.Connection]]:
    """The workspace's and the user's databases, with the session lease held from
    ``lease_at`` when given (LockBusy while a dream runs); everything closed after, also when
    the lease cannot be had."""
    from memcore.sessions.lease import Lease
    from memcore.sessions.userdb import open_user_db

    conn = connect(ws.db_path)
    user: sqlite3.Connection | None = None
    lease: Lease | None = None
    try:
        ensure_schema(conn)
        user = open_user_db()
        if lease_at is not None:
            held = Lease(conn)
            held.acquire(lease_at)
            lease = held
        yield conn, user
    finally:
        if lease is not None:
            lease.release()
        if user is not None:
            user.close()
        conn.close()


def edit(ws: Workspace, ref: str, text: str, *, now: datetime) -> dict[str, Any]:
    """Publish ``text`` as the next version of the short memory ``ref`` names (its latest;
    ``@vN`` must be the latest). The text is redacted like every stored text and must fit the
    level's limit. Holds the session lease (LockBusy while a dream runs), re-exports
    ``memory/summaries/`` as a journaled run, and records the edit so ``memcore undo ID``
    takes it back (``undo_edit``)."""
    from memcore.sessions.export import export_summaries

    body = redact("\n".join(line.rstrip() for line in text.strip().splitlines()))
    level, owner, version = _target(ref)
    limit = _limit(ws, level)
    if len(body) > limit:
        raise InputError(
            f"{ref}: the new text is {len(body)} characters; the {level} limit is {limit}"
            f" ([sessions.limits] {level})"
        )
    ws.ensure_dreams_dir()
    with _databases(ws, lease_at=now) as (conn, user):
        target = user if level == "global" else conn
        owner = _owner(target, level, owner)
        cur = latest(target, level, owner)
        if cur is None:
            raise InputError(f"{ref!r}: no such short memory; see `memcore recall {level}s`")
        if version is not None and version != cur.version:
            raise InputError(f"{ref}: not the latest version; edit {cur.ref}")
        if body == cur.text:
            raise InputError(f"{cur.ref}: the text is unchanged; nothing to edit")
        with transaction(target):
            v = insert_version(
                target,
                level,
                owner,
                body,
                [Source("previous", cur.ref, preview=cur.text)],
                now_iso=iso_ms(now),
                run_id="edit",
                model="by hand",
            )
        files, run_id = export_summaries(ws, conn, now=now, trigger="command")
        edit_id = _record_edit(target, run_id, level, owner, cur.version, v.version, now)
        return {
            "edit": edit_id,
            "memory": cur.ref,
            "version": v.ref,
            "text": body,
            "exports": files,
            "journal_run": run_id,
            "undo": f"memcore undo {edit_id}",
        }


def _find_edit(ws: Workspace, edit_id: str | None) -> tuple[str, str] | None:
    """(edit id, which database: ``workspace`` or ``user``) of an edit named by its id or
    its export's journal run; with None, the edit whose export is the latest undoable run."""
    from memcore.journal import runs as journal_runs

    if not ws.db_path.exists():
        return None
    with _databases(ws) as (conn, user):
        if edit_id is None:
            journal_runs.ensure_schema(conn)
            edit_id = journal_runs.latest_undoable(conn)
            if edit_id is None:
                return None
        for name, db in (("workspace", conn), ("user", user)):
            row = db.execute(
                "SELECT id FROM sess_edits WHERE id=? OR journal_run=?", (edit_id, edit_id)
            ).fetchone()
            if row is not None:
                return row[0], name
        return None


def is_edit(ws: Workspace, run_id: str | None) -> bool:
    """Whether ``memcore undo RUN_ID`` (None: the latest run) names a hand edit."""
    return _find_edit(ws, run_id) is not None


def undo_edit(ws: Workspace, run_id: str | None, *, now: datetime) -> dict[str, Any]:
    """Take an edit back: the text before it comes back as the next version (versions stay
    immutable), the exports follow as a journaled run. Refused when the memory has a newer
    version than the edit's, or the edit was undone already."""
    from memcore.journal import runs as journal_runs
    from memcore.sessions.export import export_summaries

    found = _find_edit(ws, run_id)
    if found is None:
        raise InputError(f"{run_id!r} is not a hand edit of a short memory")
    edit_id, where = found
    with _databases(ws, lease_at=now) as (conn, user):
        db = user if where == "user" else conn
        row = db.execute("SELECT * FROM sess_edits WHERE id=?", (edit_id,)).fetchone()
        level, owner = row["level"], row["owner"]
        if row["undone_by"]:
            raise InputError(f"edit {edit_id} was undone already ({row['undone_by']})")
        cur = latest(db, level, owner)
        if cur is None or cur.version != row["after_version"]:
            raise InputError(
                f"edit {edit_id}: {memory_ref(level, owner, row['after_version'])} is no longer"
                f" the latest ({cur.ref if cur else 'none'}); edit that instead"
            )
        before = get_version(db, level, owner, row["before_version"])
        if before is None:
            raise InputError(f"edit {edit_id}: the version before it is gone")
        with transaction(db):
            v = insert_version(
                db,
                level,
                owner,
                before.text,
                [Source("previous", cur.ref, preview=cur.text)],
                now_iso=iso_ms(now),
                run_id="undo-edit",
                model="by hand",
            )
        files, jrun = export_summaries(ws, conn, now=now, trigger="command")
        with transaction(db):
            db.execute("UPDATE sess_edits SET undone_by=? WHERE id=?", (v.ref, edit_id))
        if row["journal_run"]:
            journal_runs.ensure_schema(conn)
            with transaction(conn):
                conn.execute(
                    "UPDATE dream_runs SET undone_by=? WHERE run_id=? AND undone_by IS NULL",
                    (jrun or v.ref, row["journal_run"]),
                )
        return {
            "edit": edit_id,
            "memory": cur.ref,
            "version": v.ref,
            "restored_from": before.ref,
            "exports": files,
            "journal_run": jrun,
        }
