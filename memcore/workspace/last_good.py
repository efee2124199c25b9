"""The last valid settings of a workspace, kept in ``memcore.sqlite`` across restarts.

When ``memcore.toml`` is edited into an invalid state, a long-running gateway keeps running on
the settings it last read successfully. Kept only in memory, they would be gone after a
restart, and a gateway started while the file is invalid would run nothing. This module keeps
them in the table ``settings_last_good`` (one row per settings kind, e.g. ``dreaming``): a
JSON document and when it was saved. Each save is one ``INSERT OR REPLACE`` (atomic); a
process writes only when the settings differ from what it last saved or read, so a status
poll of a valid, unchanged config writes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from memcore.errors import MemcoreError
from memcore.workspace import db
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace

_SCHEMA = """
CREATE TABLE IF NOT EXISTS settings_last_good (
    name TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    saved_at TEXT NOT NULL
)
"""

T = TypeVar("T")

_known: dict[tuple[str, str], tuple[str, datetime | None]] = {}  # what is in the table
_lock = threading.Lock()


def _read(ws: Workspace, name: str) -> tuple[str, datetime | None] | None:
    if not ws.db_path.exists():
        return None
    conn = db.connect(ws.db_path)
    try:
        conn.execute(_SCHEMA)
        row = conn.execute(
            "SELECT doc, saved_at FROM settings_last_good WHERE name = ?", (name,)
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else (str(row[0]), parse_iso(row[1]))


def remember(ws: Workspace, name: str, doc: dict[str, Any], now: datetime) -> None:
    """Keep ``doc`` (JSON-serialisable) as the last good ``name`` settings of ``ws``. Best
    effort: a database that cannot be written (read-only, locked) leaves the previous row."""
    text = json.dumps(doc, sort_keys=True)
    key = (str(ws.root), name)
    with _lock:
        known = _known.get(key)
        if known is not None and known[0] == text:
            return
    if not ws.root.is_dir():
        return  # a vanished workspace is never re-created
    with contextlib.suppress(sqlite3.Error, OSError, MemcoreError):
        stored = _read(ws, name)
        if stored is not None and stored[0] == text:
            with _lock:
                _known[key] = stored
            return
        ws.ensure_dreams_dir()
        conn = db.connect(ws.db_path)
        try:
            conn.execute(_SCHEMA)
            conn.execute(
                "INSERT OR REPLACE INTO settings_last_good VALUES (?, ?, ?)",
                (name, text, iso_ms(now)),
            )
        finally:
            conn.close()
        with _lock:
            _known[key] = (text, now)


def recall(ws: Workspace, name: str) -> tuple[dict[str, Any], datetime | None] | None:
    """The last good ``name`` settings of ``ws`` and when they were saved, or None (never
    saved, or the database cannot be read)."""
    key = (str(ws.root), name)
    with _lock:
        known = _known.get(key)
    if known is None:
        try:
            known = _read(ws, name)
        except (sqlite3.Error, OSError, MemcoreError):
            return None
        if known is None:
            return None
        with _lock:
            _known[key] = known
    try:
        doc = json.loads(known[0])
    except ValueError:
        return None
    return (doc, known[1]) if isinstance(doc, dict) else None


def forget_cached() -> None:
    """Drop what this process knows of the table (a test standing in for a restart)."""
    with _lock:
        _known.clear()


def current_or_last_good(
    ws: Workspace,
    name: str,
    load: Callable[[], T],
    cls: type[T],
    now: datetime,
) -> tuple[T | None, str | None]:
    """``name`` settings (a dataclass ``cls``) as ``load`` reads them from memcore.toml now,
    remembered as the last good ones, and None for the error; when ``load`` raises
    MemcoreError, the last good settings rebuilt from the table and the error (None settings
    when none were saved or they no longer fit ``cls``). Fields the saved document lacks take
    ``cls``'s defaults; a JSON list goes back into a tuple field as a tuple."""
    try:
        settings = load()
    except MemcoreError as exc:
        got = recall(ws, name)
        return (None if got is None else _rebuild(cls, got[0])), str(exc)
    remember(ws, name, dataclasses.asdict(settings), now)  # type: ignore[call-overload]
    return settings, None


def _rebuild(cls: type[T], doc: dict[str, Any]) -> T | None:
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in doc.items():
        f = fields.get(key)
        if f is None:
            continue
        if isinstance(value, list) and isinstance(f.default, tuple):
            value = tuple(value)
        values[key] = value
    try:
        return cls(**values)
    except (TypeError, ValueError):
        return None
