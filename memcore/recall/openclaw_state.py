"""OpenClaw's newest recall state, read from its SQLite store (read-only, never written).

Newer OpenClaw keeps the short-term recall entries in the ``plugin_state_entries`` table of a
SQLite database, namespace ``short-term-recall``, each row one entry in the same JSON shape as
``memory/.dreams/short-term-recall.json`` (the old file is renamed ``*.migrated``). When the
JSON store is absent, memcore reads those rows so ranking and the preview work on a current
OpenClaw install.

Where: a ``*.sqlite`` / ``*.db`` file holding that table in ``memory/.dreams/``, beside the
workspace, or in ``state/`` beside it (``~/.openclaw/``, ``~/.openclaw/state/``). The
database is opened read-only (``mode=ro``); the column names are found from the table itself
(a namespace column, a key column and a JSON value column), so small schema changes are
tolerated; anything unexpected gives nothing. A recording by memcore then writes memcore's own
JSON store (with those entries), never OpenClaw's database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from memcore.workspace.core import Workspace

TABLE = "plugin_state_entries"
NAMESPACE = "short-term-recall"
_NS_COLS = ("namespace", "ns", "store", "scope")
_KEY_COLS = ("key", "entry_key", "item_key", "id")
_VALUE_COLS = ("value", "value_json", "json", "data", "payload")


def candidates(ws: Workspace) -> list[Path]:
    """SQLite files that may hold OpenClaw's plugin state, nearest first."""
    folders = [ws.dreams_dir, ws.root.parent, ws.root.parent / "state"]
    out: list[Path] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for pattern in ("*.sqlite", "*.db"):
            for p in sorted(folder.glob(pattern)):
                if p.name != "memcore.sqlite" and p.is_file() and p not in out:
                    out.append(p)
    return out


def _pick(cols: list[str], names: tuple[str, ...]) -> str | None:
    lower = {c.lower(): c for c in cols}
    return next((lower[n] for n in names if n in lower), None)


def read_entries(db: Path) -> dict[str, Any] | None:
    """The recall entries of one database, or None when it holds no such table."""
    try:
        conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=1)
    except sqlite3.Error:
        return None
    try:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({TABLE})")]
        ns, key, value = _pick(cols, _NS_COLS), _pick(cols, _KEY_COLS), _pick(cols, _VALUE_COLS)
        if not cols or key is None or value is None:
            return None
        sql = f'SELECT "{key}", "{value}" FROM {TABLE}'
        args: tuple[str, ...] = ()
        if ns is not None:
            sql += f' WHERE "{ns}" = ?'
            args = (NAMESPACE,)
        rows = conn.execute(sql, args).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    entries: dict[str, Any] = {}
    for k, v in rows:
        try:
            doc = orjson.loads(v) if isinstance(v, str | bytes) else None
        except orjson.JSONDecodeError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("entries"), dict):
            entries.update(doc["entries"])  # the whole store in one row
        elif isinstance(doc, dict):
            entries[str(doc.get("key") or k)] = doc
    return entries


def load(ws: Workspace) -> tuple[dict[str, Any], Path] | None:
    """A store document from the first database that has recall entries, and its path (only
    in an OpenClaw workspace: other folders' databases are never opened)."""
    from memcore.workspace.kinds import kind_of

    if kind_of(ws.root).name != "openclaw":
        return None
    for db in candidates(ws):
        entries = read_entries(db)
        if entries:
            return {"version": 1, "entries": entries}, db
    return None
