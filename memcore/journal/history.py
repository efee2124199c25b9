"""Reading the journal (``memcore history``) and bringing back a MEMORY.md version
(``memcore restore``). Nothing here writes except :func:`restore_version`, which is a
write-ahead run of its own (so it can be undone like any other)."""

from __future__ import annotations

import contextlib
import difflib
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from memcore.errors import InputError
from memcore.journal import runs, wal
from memcore.workspace import db
from memcore.workspace.core import Workspace


@contextlib.contextmanager
def connect(ws: Workspace) -> Iterator[sqlite3.Connection]:
    """The workspace database with the journal tables; closed on exit."""
    conn = db.connect(ws.db_path)
    try:
        runs.ensure_schema(conn)
        yield conn
    finally:
        conn.close()


def list_runs(ws: Workspace, limit: int = 50) -> list[dict[str, Any]]:
    """Every run, newest first (empty when the workspace has no database yet)."""
    if not ws.db_path.exists():
        return []
    with connect(ws) as conn:
        return runs.runs(conn, limit)


def _diff(before: str | None, after: str | None, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=f"a/{name}" if before is not None else "/dev/null",
            tofile=f"b/{name}" if after is not None else "/dev/null",
        )
    )


def show_run(ws: Workspace, run_id: str, *, diff: bool = False) -> dict[str, Any]:
    """One run: what :func:`list_runs` says, its entry changes and its files (before and
    after SHA-1, whether the images are still kept, and with ``diff`` a unified diff)."""
    if not ws.db_path.exists():
        raise InputError(f"no run {run_id!r} in the journal (this workspace has no runs yet)")
    with connect(ws) as conn:
        out = runs.run_json(conn, run_id)
        if out is None:
            raise InputError(
                f"no run {run_id!r} in the journal; allowed: a run id that memcore history lists"
            )
        out["entryChanges"] = [
            {
                "step": c.step,
                "action": c.action,
                "id": c.entry_id,
                "reason": c.reason,
                "before": c.before_raw,
                "after": c.after_raw,
                "beforeMeta": c.before_meta,
                "afterMeta": c.after_meta,
            }
            for c in runs.changes_of(conn, run_id)
        ]
        files = []
        for img in wal.file_images(conn, run_id):
            kept = wal.has_blob(conn, img.before_sha1) and wal.has_blob(conn, img.after_sha1)
            f: dict[str, Any] = {
                "path": img.path,
                "beforeSha1": img.before_sha1,
                "afterSha1": img.after_sha1,
                "imagesKept": kept,
            }
            if diff:
                if kept:
                    before = wal.image_text(conn, img.before_sha1)
                    after = wal.image_text(conn, img.after_sha1)
                    f["diff"] = _diff(before, after, img.path)
                else:
                    f["diff"] = None
            files.append(f)
        out["fileImages"] = files
    return out


def versions(ws: Workspace) -> list[dict[str, Any]]:
    """The MEMORY.md versions kept (newest first), with their size in characters."""
    if not ws.db_path.exists():
        return []
    with connect(ws) as conn:
        out = wal.versions(conn)
        current = wal.sha1_of(wal.read_bytes(ws.memory_md))
        for v in out:
            text = wal.image_text(conn, v["sha1"])
            v["chars"] = len(text) if text is not None else None
            v["lines"] = text.count("\n") if text is not None else None
            v["current"] = v["sha1"] == current
        return out


def restore_version(
    ws: Workspace,
    version: int,
    *,
    now: datetime,
    lock_timeout: float | None = None,
    trigger: str = "command",
) -> dict[str, Any]:
    """Bring MEMORY.md back to ``version`` (of :func:`versions`) as a journaled run."""
    with ws.lock(lock_timeout), connect(ws) as conn:
        row = conn.execute(
            "SELECT sha1 FROM memory_versions WHERE version = ?", (version,)
        ).fetchone()
        if row is None:
            kept = [v["version"] for v in wal.versions(conn)]
            allowed = f"{min(kept)} to {max(kept)}" if kept else "none kept yet"
            raise InputError(
                f"no MEMORY.md version {version}; allowed: {allowed} (memcore history versions)"
            )
        data = wal.get_blob(conn, row[0])
        if data is None:
            raise InputError(f"MEMORY.md version {version} is no longer kept")
        if wal.read_bytes(ws.memory_md) == data:
            return {"runId": None, "version": version, "changed": False}
        run_id = runs.new_run_id(now)
        wal.commit_run(
            ws,
            conn,
            wal.RunSpec(
                run_id,
                "restore",
                "restore",
                now,
                trigger,
                counters={"version": version},
            ),
            {ws.memory_md: data},
        )
    return {"runId": run_id, "version": version, "changed": True}
