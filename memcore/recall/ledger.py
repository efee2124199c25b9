"""The entry ledger: machine-kept metadata of MEMORY.md entries in ``memcore.sqlite``, by id.

Importance, access count, last access, confidence and the decay stamp change often, so they live
here; pinned, type and scope may stand in the entry's marker, and the marker wins (a human edit
of the file is never overridden by the database). Hand-written entries get defaults (importance
0.5, created_at = first seen); promoted entries take their importance from the promotion score.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memcore.workspace import db, safe_read
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace, normalize_rel_path
from memcore.workspace.db import rollback_quietly as db_rollback
from memcore.workspace.entries import Document, Entry, entries_for_lines, parse

DEFAULT_IMPORTANCE = 0.5
DEFAULT_CONFIDENCE = 0.7

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dream_ledger (
    id TEXT PRIMARY KEY,
    importance REAL NOT NULL,
    type TEXT NOT NULL DEFAULT 'unknown',
    scope TEXT NOT NULL DEFAULT 'global',
    pinned INTEGER NOT NULL DEFAULT 0,
    confidence REAL NOT NULL,
    created_at TEXT NOT NULL,
    last_accessed_at TEXT,
    access_count INTEGER NOT NULL DEFAULT 0,
    decayed_at TEXT
);
CREATE TABLE IF NOT EXISTS dream_state (
    key TEXT PRIMARY KEY,
    value TEXT
);
"""


@dataclass
class Meta:
    """Effective metadata of one entry (ledger row, marker attributes, defaults)."""

    id: str
    importance: float = DEFAULT_IMPORTANCE
    type: str = "unknown"
    scope: str = "global"
    pinned: bool = False
    confidence: float = DEFAULT_CONFIDENCE
    created_at: str = ""
    last_accessed_at: str | None = None
    access_count: int = 0
    decayed_at: str | None = None
    stored: bool = False  # a ledger row exists

    def to_json(self) -> dict[str, Any]:
        # every field is a plain value: no deep copy (asdict) needed, the same dict
        return {name: getattr(self, name) for name in _META_JSON_FIELDS}


_META_JSON_FIELDS = tuple(f.name for f in dataclasses.fields(Meta) if f.name != "stored")


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)


@contextlib.contextmanager
def connect(ws: Workspace) -> Iterator[sqlite3.Connection]:
    """The workspace database with the ledger table in place; closed on exit."""
    conn = db.connect(ws.db_path)
    try:
        ensure_schema(conn)
        yield conn
    finally:
        conn.close()


def _row_meta(row: sqlite3.Row) -> Meta:
    return Meta(
        id=row["id"],
        importance=float(row["importance"]),
        type=row["type"],
        scope=row["scope"],
        pinned=bool(row["pinned"]),
        confidence=float(row["confidence"]),
        created_at=row["created_at"],
        last_accessed_at=row["last_accessed_at"],
        access_count=int(row["access_count"]),
        decayed_at=row["decayed_at"],
        stored=True,
    )


def load_rows(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, Meta]:
    out: dict[str, Meta] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        part = unique[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in conn.execute(f"SELECT * FROM dream_ledger WHERE id IN ({marks})", part):
            out[row["id"]] = _row_meta(row)
    return out


def effective(entry: Entry, row: Meta | None, now: datetime) -> Meta:
    """Metadata of ``entry``: the ledger row (or defaults), with the marker's attributes on top."""
    if row is None:
        imp = entry.promotion_score if entry.promotion_score is not None else DEFAULT_IMPORTANCE
        meta = Meta(id=entry.id, importance=min(1.0, max(0.0, imp)), created_at=iso_ms(now))
    else:
        meta = replace(row)
    a = entry.attrs
    if "type" in a:
        meta.type = a["type"]
    if "scope" in a:
        meta.scope = a["scope"]
    if "pinned" in a:
        meta.pinned = a["pinned"] == "true"
    if "confidence" in a:
        meta.confidence = float(a["confidence"])
    if "created" in a:
        created = parse_iso(a["created"])
        if created is not None:
            meta.created_at = iso_ms(created)
    return meta


def metas_for(conn: sqlite3.Connection, doc: Document, now: datetime) -> dict[str, Meta]:
    """Effective metadata of every entry of ``doc`` (nothing is written)."""
    rows = load_rows(conn, [e.id for e in doc.entries])
    return {e.id: effective(e, rows.get(e.id), now) for e in doc.entries}


def save(conn: sqlite3.Connection, metas: Sequence[Meta]) -> None:
    """Insert or replace ledger rows (callers hold a transaction when they need one)."""
    conn.executemany(
        "INSERT OR REPLACE INTO dream_ledger (id, importance, type, scope, pinned, confidence,"
        " created_at, last_accessed_at, access_count, decayed_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                m.id,
                float(m.importance),
                m.type,
                m.scope,
                int(m.pinned),
                float(m.confidence),
                m.created_at,
                m.last_accessed_at,
                int(m.access_count),
                m.decayed_at,
            )
            for m in metas
        ],
    )


def delete(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    conn.executemany("DELETE FROM dream_ledger WHERE id = ?", [(i,) for i in ids])


def restore(conn: sqlite3.Connection, entry_id: str, meta: Mapping[str, Any] | None) -> None:
    """Put a journaled metadata snapshot back (None: drop the row)."""
    if meta is None:
        delete(conn, [entry_id])
        return
    fields: dict[str, Any] = {k: meta.get(k) for k in Meta.__dataclass_fields__ if k != "stored"}
    fields["id"] = entry_id
    save(conn, [Meta(**fields)])


def get_state(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM dream_state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_state(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    conn.execute("INSERT OR REPLACE INTO dream_state (key, value) VALUES (?, ?)", (key, value))


def read_memory(ws: Workspace) -> str:
    """MEMORY.md text ('' when missing)."""
    if not ws.memory_md.exists():
        return ""
    return safe_read.read_text(ws, ws.memory_md, max_bytes=safe_read.MEMORY_MD_MAX_BYTES)


_PARSE_CACHE: dict[str, tuple[tuple[int, int], Document]] = {}


def _parsed(ws: Workspace) -> Document:
    """MEMORY.md parsed, reused while its size and mtime are unchanged (searches are frequent)."""
    st = ws.memory_md.stat()
    key, stamp = str(ws.memory_md), (st.st_mtime_ns, st.st_size)
    hit = _PARSE_CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    doc = parse(read_memory(ws))
    if len(_PARSE_CACHE) > 16:
        _PARSE_CACHE.clear()
    _PARSE_CACHE[key] = (stamp, doc)
    return doc


def record_access(ws: Workspace, hits: Sequence[Mapping[str, Any]], now: datetime) -> int:
    """Count search hits on MEMORY.md as accesses of the entries their line ranges cover.

    ``hits`` are search results with ``path``, ``startLine`` and ``endLine``; hits on other files
    are ignored. Returns how many entry accesses were recorded. Never raises for odd hits.
    """
    wanted = []
    for h in hits:
        path = normalize_rel_path(str(h.get("path") or ""))
        if path not in ("MEMORY.md", str(ws.memory_md)):
            continue
        try:
            wanted.append((int(h["startLine"]), int(h["endLine"])))
        except (KeyError, TypeError, ValueError):
            continue
    if not wanted or not ws.memory_md.is_file():
        return 0
    doc = _parsed(ws)
    ids: list[Entry] = []
    for lo, hi in wanted:
        ids.extend(entries_for_lines(doc, lo, max(lo, hi)))
    if not ids:
        return 0
    stamp = iso_ms(now)
    with connect(ws) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = load_rows(conn, [e.id for e in ids])
            metas: dict[str, Meta] = {}
            for e in ids:
                m = metas.get(e.id) or effective(e, rows.get(e.id), now)
                m.access_count += 1
                if m.last_accessed_at is None or m.last_accessed_at < stamp:
                    m.last_accessed_at = stamp
                metas[e.id] = m
            save(conn, list(metas.values()))
            conn.execute("COMMIT")
        except BaseException:
            db_rollback(conn)
            raise
    return len(ids)
