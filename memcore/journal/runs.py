"""The run journal in ``memcore.sqlite`` and the archive file ``memory/.dreams/archive.md``.

Every applied change is a row of ``dream_changes``: run id, step, action, reason, the entry's
text and metadata before and after, and where it stood (the previous entry's id, its section,
its line), so ``memcore dream undo`` can put it back. A run keeps MEMORY.md's hash before and
after and the text before (compressed): when nothing changed since, undo restores that text
byte for byte.
The promote step also journals the recall keys it marked ``promotedAt`` (action ``recall``),
so undo can make them promotable again.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, atomic_write_text, read_text_checked

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dream_runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    mode TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    counters TEXT NOT NULL DEFAULT '{}',
    before_sha1 TEXT,
    after_sha1 TEXT,
    before_text BLOB,
    undo_of TEXT,
    undone_by TEXT
);
CREATE TABLE IF NOT EXISTS dream_changes (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step TEXT NOT NULL,
    action TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    before_raw TEXT,
    after_raw TEXT,
    before_meta TEXT,
    after_meta TEXT,
    anchor TEXT,
    PRIMARY KEY (run_id, seq)
);
"""

ARCHIVE_HEADER = (
    "# memcore archive\n\n"
    "Entries that `memcore dream` merged away or forgot, with their metadata and the reason.\n"
    "`memcore dream undo RUN_ID` puts a run's entries back into MEMORY.md.\n"
)


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


@dataclass
class Change:
    step: str  # promote | merge | reconcile | decay | forget | set | undo
    # add | remove | modify | meta, or recall: a recall-store key (entry_id) whose promotedAt
    # the promote step set; before_meta/after_meta hold {"promotedAt": ...}, not ledger data
    action: str
    entry_id: str
    reason: str = ""
    before_raw: str | None = None
    after_raw: str | None = None
    before_meta: dict[str, Any] | None = None
    after_meta: dict[str, Any] | None = None
    anchor: dict[str, Any] = field(default_factory=dict)


def record_run(
    conn: sqlite3.Connection,
    *,
    run_id: str,
    kind: str,
    mode: str,
    started: datetime,
    finished: datetime,
    counters: dict[str, Any],
    before_text: str,
    before_sha1: str,
    after_sha1: str,
    changes: Sequence[Change],
    undo_of: str | None = None,
) -> None:
    """Write one applied run and its changes (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO dream_runs (run_id, kind, mode, started_at, finished_at, status, counters,"
        " before_sha1, after_sha1, before_text, undo_of)"
        " VALUES (?, ?, ?, ?, ?, 'applied', ?, ?, ?, ?, ?)",
        (
            run_id,
            kind,
            mode,
            iso_ms(started),
            iso_ms(finished),
            json.dumps(counters, sort_keys=True),
            before_sha1,
            after_sha1,
            zlib.compress(before_text.encode("utf-8"), 6),
            undo_of,
        ),
    )
    conn.executemany(
        "INSERT INTO dream_changes (run_id, seq, step, action, entry_id, reason, before_raw,"
        " after_raw, before_meta, after_meta, anchor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run_id,
                seq,
                c.step,
                c.action,
                c.entry_id,
                c.reason,
                c.before_raw,
                c.after_raw,
                json.dumps(c.before_meta) if c.before_meta is not None else None,
                json.dumps(c.after_meta) if c.after_meta is not None else None,
                json.dumps(c.anchor),
            )
            for seq, c in enumerate(changes)
        ],
    )


def runs(conn: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Runs newest first, with their counters."""
    out = []
    for r in conn.execute(
        "SELECT run_id, kind, mode, started_at, finished_at, status, counters, undo_of, undone_by,"
        " (SELECT count(*) FROM dream_changes c WHERE c.run_id = r.run_id) AS changes"
        " FROM dream_runs r ORDER BY started_at DESC, rowid DESC LIMIT ?",
        (limit,),
    ):
        out.append(
            {
                "runId": r["run_id"],
                "kind": r["kind"],
                "mode": r["mode"],
                "ranAt": r["started_at"],
                "finishedAt": r["finished_at"],
                "status": r["status"],
                "counters": json.loads(r["counters"] or "{}"),
                "changes": r["changes"],
                "undoOf": r["undo_of"],
                "undoneBy": r["undone_by"],
            }
        )
    return out


def get_run(conn: sqlite3.Connection, run_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM dream_runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    return row


def latest_undoable(conn: sqlite3.Connection) -> str | None:
    row = conn.execute(
        "SELECT run_id FROM dream_runs WHERE status = 'applied' AND kind != 'undo'"
        " ORDER BY started_at DESC, rowid DESC LIMIT 1"
    ).fetchone()
    return row[0] if row else None


def changes_of(conn: sqlite3.Connection, run_id: str) -> list[Change]:
    out = []
    for r in conn.execute("SELECT * FROM dream_changes WHERE run_id = ? ORDER BY seq", (run_id,)):
        out.append(
            Change(
                step=r["step"],
                action=r["action"],
                entry_id=r["entry_id"],
                reason=r["reason"],
                before_raw=r["before_raw"],
                after_raw=r["after_raw"],
                before_meta=json.loads(r["before_meta"]) if r["before_meta"] else None,
                after_meta=json.loads(r["after_meta"]) if r["after_meta"] else None,
                anchor=json.loads(r["anchor"] or "{}"),
            )
        )
    return out


def before_text(row: sqlite3.Row) -> str | None:
    blob = row["before_text"]
    return zlib.decompress(blob).decode("utf-8") if blob else None


def last_applied_at(conn: sqlite3.Connection, kinds: tuple[str, ...] = ("dream",)) -> str | None:
    marks = ",".join("?" * len(kinds))
    row = conn.execute(
        f"SELECT max(started_at) FROM dream_runs WHERE kind IN ({marks})", kinds
    ).fetchone()
    return row[0] if row else None


# -- archive ------------------------------------------------------------------------------


def archive_block(
    run_id: str,
    step: str,
    entry_id: str,
    reason: str,
    raw: str,
    meta: dict[str, Any] | None,
    now: datetime,
) -> str:
    m = meta or {}
    meta_line = ", ".join(
        f"{k}={m.get(k)}"
        for k in (
            "type",
            "scope",
            "importance",
            "confidence",
            "pinned",
            "created_at",
            "last_accessed_at",
            "access_count",
        )
        if k in m
    )
    body = raw if raw.endswith("\n") else raw + "\n"
    return (
        f'\n<!-- memcore:archived id="{entry_id}" run="{run_id}" step="{step}" '
        f'at="{iso_ms(now)}" -->\n'
        f"### [{entry_id}] {step} — {reason}\n\n"
        f"- metadata: {meta_line}\n\n"
        f"{body}"
    )


def append_archive(ws: Workspace, blocks: Sequence[str]) -> None:
    """Append blocks to the archive (recreated with its header when it was deleted)."""
    if not blocks:
        return
    path = ws.archive_path
    text = read_text_checked(path) if path.exists() else ARCHIVE_HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    atomic_write_text(path, text + "".join(blocks))


def remove_archived(ws: Workspace, run_id: str) -> int:
    """Drop the archive blocks of ``run_id`` (after an undo). Missing archive: nothing to do."""
    path = ws.archive_path
    if not path.exists():
        return 0
    text = read_text_checked(path)
    marker = "<!-- memcore:archived "
    parts = text.split("\n" + marker)
    kept = [parts[0]]
    dropped = 0
    for part in parts[1:]:
        if f'run="{run_id}"' in part.split("\n", 1)[0]:
            dropped += 1
            continue
        kept.append(part)
    if dropped:
        atomic_write_text(path, ("\n" + marker).join(kept))
    return dropped
