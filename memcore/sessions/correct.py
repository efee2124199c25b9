"""Correcting short memories by hand: ``memcore sessions forget REF --text TEXT``.

Forgetting publishes a new version of the memory without the lines that hold ``TEXT`` (old
versions stay, as every version is immutable). A purge goes further, for a secret or a
private detail found later: the text is replaced by ``[purged]`` in every version of every
level that holds it (the workspace and the user database), in the source previews, in the
exports in ``memory/summaries/`` and in the journal's copies of earlier exports. The
transcripts themselves are the user's files and are left alone (the result says so). The
export rewrite is one journaled run; the result lists everything that was changed.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from datetime import datetime
from typing import Any

from memcore.errors import InputError
from memcore.redact import redact
from memcore.sessions.store import (
    Source,
    ensure_schema,
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


def _purge_db(db: sqlite3.Connection, text: str) -> tuple[list[str], int]:
    """Replace ``text`` in every version and source preview; (refs changed, previews)."""
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
    return refs, cur.rowcount


def _purge_journal_copies(conn: sqlite3.Connection, text: str) -> int:
    """Scrub the journal's copies of earlier exports (undo then restores scrubbed files)."""
    try:
        shas = {
            sha
            for row in conn.execute(
                "SELECT before_sha1, after_sha1 FROM journal_files"
                " WHERE path LIKE 'memory/summaries/%'"
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
    also remove ``text`` from every older version, preview, export and export copy."""
    from memcore.sessions.export import export_summaries
    from memcore.sessions.userdb import open_user_db

    if not text.strip():
        raise InputError("--text is empty; give the text to forget (at least one character)")
    level, owner, _version = _target(ref)
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    user = open_user_db()
    try:
        target = user if level == "global" else conn
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
            out["purged_versions"] = refs
            out["purged_previews"] = previews
            out["left_alone"] = "the session transcripts (the user's own files)"
        files, run_id = export_summaries(ws, conn, now=now, trigger="command")
        out["exports"] = files
        out["journal_run"] = run_id
        if purge:  # after the export: its journal run keeps a copy of the files it replaced
            out["purged_journal_copies"] = _purge_journal_copies(conn, text)
        return out
    finally:
        conn.close()
        user.close()
