"""The run journal in ``memcore.sqlite`` and the archive file ``memory/.dreams/archive.md``.

Every change memcore makes to a user's file is a run (``dream_runs``): its kind (promote,
dream, review, set, undo, restore, ...), what triggered it (``command``, ``schedule``,
``page``, ``mcp``), its status (``pending`` while its files are being written, then
``applied``, ``undone`` or ``rolled_back``; ``interrupted`` when a killed run could not be
rolled back because the journal lost a preimage), and its entry-level changes (``dream_changes``:
step, action, reason, the entry's text and metadata before and after, and where it stood),
so ``memcore undo`` can put entries back even after later edits. The full bytes of every file
a run touches, before and after, are kept compressed and content-addressed
(``journal_blobs``, ``journal_files``; see :mod:`memcore.journal.wal`), and the last versions
of MEMORY.md are listed in ``memory_versions``.
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

from memcore.errors import WorkspaceError
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, read_text_checked

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
    undone_by TEXT,
    trigger TEXT NOT NULL DEFAULT 'command'
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
CREATE TABLE IF NOT EXISTS journal_blobs (
    sha1 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS journal_files (
    run_id TEXT NOT NULL,
    path TEXT NOT NULL,
    before_sha1 TEXT,
    after_sha1 TEXT,
    PRIMARY KEY (run_id, path)
);
CREATE TABLE IF NOT EXISTS memory_versions (
    version INTEGER PRIMARY KEY AUTOINCREMENT,
    sha1 TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    run_id TEXT,
    role TEXT NOT NULL,
    size INTEGER NOT NULL
);
"""

#: What may start a run.
TRIGGERS = ("command", "schedule", "page", "mcp")
#: Statuses a run's row can have.
STATUSES = ("pending", "applied", "undone", "rolled_back", "interrupted")

ARCHIVE_HEADER = (
    "# memcore archive\n\n"
    "Entries that `memcore dream` merged away or forgot, with their metadata and the reason.\n"
    "`memcore dream undo RUN_ID` puts a run's entries back into MEMORY.md.\n"
)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the journal tables; add ``trigger`` to a journal written before it existed."""
    conn.executescript(_SCHEMA)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(dream_runs)")}
    if "trigger" not in cols:
        conn.execute("ALTER TABLE dream_runs ADD COLUMN trigger TEXT NOT NULL DEFAULT 'command'")


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


def insert_run(
    conn: sqlite3.Connection,
    *,
    run_id: str,
    kind: str,
    mode: str,
    trigger: str,
    started: datetime,
    status: str,
    counters: dict[str, Any],
    before_sha1: str | None,
    after_sha1: str | None,
    changes: Sequence[Change],
    undo_of: str | None = None,
) -> None:
    """Insert one run and its changes (inside the caller's transaction)."""
    if trigger not in TRIGGERS:
        raise ValueError(f"trigger {trigger!r} is not one of {', '.join(TRIGGERS)}")
    conn.execute(
        "INSERT INTO dream_runs (run_id, kind, mode, started_at, status, counters,"
        " before_sha1, after_sha1, undo_of, trigger)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            kind,
            mode,
            iso_ms(started),
            status,
            json.dumps(counters, sort_keys=True),
            before_sha1,
            after_sha1,
            undo_of,
            trigger,
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


def _loads(text: str, run_id: str, what: str) -> Any:
    """A JSON column of the journal; a corrupt one is a one-line WorkspaceError."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        raise WorkspaceError(
            f"the journal in memcore.sqlite is corrupt: the {what} of run {run_id} are not "
            "JSON; allowed: the journal memcore wrote (restore the file from a backup, or "
            "delete memory/.dreams/memcore.sqlite to start a new journal)"
        ) from None


def _counters(text: str | None) -> dict[str, Any]:
    """A run's counters are a summary for display, not what undo works from: a corrupt value
    reads as ``{"unreadable": true}`` so one damaged row never stops history from listing."""
    try:
        value = json.loads(text or "{}")
    except (ValueError, TypeError):
        return {"unreadable": True}
    return value if isinstance(value, dict) else {"unreadable": True}


def _run_json(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "runId": r["run_id"],
        "kind": r["kind"],
        "mode": r["mode"],
        "trigger": r["trigger"],
        "ranAt": r["started_at"],
        "finishedAt": r["finished_at"],
        "status": r["status"],
        "counters": _counters(r["counters"]),
        "changes": r["changes"],
        "files": [p for p in (r["files"] or "").split("\n") if p],
        "undoOf": r["undo_of"],
        "undoneBy": r["undone_by"],
    }


_RUN_SELECT = (
    "SELECT run_id, kind, mode, trigger, started_at, finished_at, status, counters, undo_of,"
    " undone_by,"
    " (SELECT count(*) FROM dream_changes c WHERE c.run_id = r.run_id) AS changes,"
    " (SELECT group_concat(path, char(10)) FROM journal_files f WHERE f.run_id = r.run_id)"
    " AS files FROM dream_runs r"
)


def runs(conn: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Runs newest first, with their counters, trigger and the files they wrote."""
    rows = conn.execute(
        _RUN_SELECT + " ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,)
    ).fetchall()
    return [_run_json(r) for r in rows]


def run_json(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    """One run as :func:`runs` lists it (None when there is no such run)."""
    row = conn.execute(_RUN_SELECT + " WHERE run_id = ?", (run_id,)).fetchone()
    return _run_json(row) if row is not None else None


def get_run(conn: sqlite3.Connection, run_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM dream_runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    return row


def latest_undoable(conn: sqlite3.Connection) -> str | None:
    """The newest applied run that is not itself an undo nor an eviction by the recall
    store's cap (those happen as a side effect of searching; undo them by their id)."""
    row = conn.execute(
        "SELECT run_id FROM dream_runs WHERE status = 'applied'"
        " AND kind NOT IN ('undo', 'evict')"
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
                before_meta=_loads(r["before_meta"], run_id, "changes")
                if r["before_meta"]
                else None,
                after_meta=_loads(r["after_meta"], run_id, "changes") if r["after_meta"] else None,
                anchor=_loads(r["anchor"] or "{}", run_id, "changes"),
            )
        )
    return out


def before_text(row: sqlite3.Row) -> str | None:
    """MEMORY.md before a run, as journals written before file images kept it."""
    blob = row["before_text"]
    return zlib.decompress(blob).decode("utf-8") if blob else None


def last_applied_at(conn: sqlite3.Connection, kinds: tuple[str, ...] = ("dream",)) -> str | None:
    marks = ",".join("?" * len(kinds))
    row = conn.execute(
        f"SELECT max(started_at) FROM dream_runs WHERE kind IN ({marks})"
        " AND status IN ('applied', 'undone')",
        kinds,
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


def archive_appended(ws: Workspace, blocks: Sequence[str]) -> str | None:
    """The archive's text with ``blocks`` appended (recreated with its header when it was
    deleted); None when there is nothing to append. Writes nothing: a run writes it."""
    if not blocks:
        return None
    path = ws.archive_path
    text = read_text_checked(path) if path.exists() else ARCHIVE_HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    return text + "".join(blocks)


def archive_without(ws: Workspace, run_id: str) -> str | None:
    """The archive's text without the blocks of ``run_id`` (after an undo); None when it has
    none (or there is no archive). Writes nothing."""
    path = ws.archive_path
    if not path.exists():
        return None
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
    return ("\n" + marker).join(kept) if dropped else None
