"""Session-dreaming tables in ``memcore.sqlite``: sessions, progress markers, immutable short
memory versions with their sources, uplinks (which lower versions a level has seen), runs,
state and the lease. Publishing a version, its sources and the progress marker happens in one
transaction (``transaction``)."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memcore.errors import InputError
from memcore.redact import redact
from memcore.workspace.db import rollback_quietly as db_rollback

SCHEMA = """
CREATE TABLE IF NOT EXISTS sess_files (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, format TEXT, independent INTEGER DEFAULT 0,
    generated INTEGER DEFAULT 0, size INTEGER, mtime_ns INTEGER, messages INTEGER DEFAULT 0,
    complete_through INTEGER DEFAULT 0, completed_turns INTEGER DEFAULT 0, last_turn_ts TEXT,
    last_activity TEXT, status TEXT DEFAULT 'ok', error TEXT, title TEXT
);
CREATE TABLE IF NOT EXISTS sess_progress (
    session_id TEXT PRIMARY KEY, summary_through INTEGER DEFAULT 0,
    summary_turns INTEGER DEFAULT 0, raw_through INTEGER DEFAULT 0, updated_at TEXT
);
CREATE TABLE IF NOT EXISTS sess_memories (
    id INTEGER PRIMARY KEY, level TEXT NOT NULL, owner TEXT NOT NULL, version INTEGER NOT NULL,
    text TEXT NOT NULL, created_at TEXT NOT NULL, run_id TEXT, model TEXT,
    UNIQUE (level, owner, version)
);
CREATE TABLE IF NOT EXISTS sess_memory_sources (
    memory_id INTEGER NOT NULL REFERENCES sess_memories(id), seq INTEGER NOT NULL,
    kind TEXT NOT NULL, ref TEXT NOT NULL, from_idx INTEGER, to_idx INTEGER, digest TEXT,
    preview TEXT, PRIMARY KEY (memory_id, seq)
);
CREATE TABLE IF NOT EXISTS sess_uplinks (
    level TEXT NOT NULL, owner TEXT NOT NULL, child TEXT NOT NULL, child_version INTEGER NOT NULL,
    PRIMARY KEY (level, owner, child)
);
CREATE TABLE IF NOT EXISTS sess_runs (
    id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
    trigger TEXT, holder TEXT, report TEXT, error TEXT
);
CREATE TABLE IF NOT EXISTS sess_state (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sess_lease (
    name TEXT PRIMARY KEY, holder TEXT NOT NULL, acquired_at TEXT NOT NULL, expires_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sess_budget_calls (
    id INTEGER PRIMARY KEY, run_id TEXT, day TEXT NOT NULL, model TEXT, reserved INTEGER NOT NULL,
    prompt_tokens INTEGER, cached_tokens INTEGER, completion_tokens INTEGER, charged INTEGER,
    status TEXT NOT NULL, created_at TEXT NOT NULL, settled_at TEXT
);
CREATE INDEX IF NOT EXISTS sess_budget_day ON sess_budget_calls (day);
CREATE TABLE IF NOT EXISTS sess_decisions (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, quote TEXT NOT NULL,
    quote_hash TEXT NOT NULL, messages TEXT NOT NULL, found_by TEXT NOT NULL, ts TEXT,
    created_at TEXT NOT NULL, run_id TEXT, UNIQUE (session_id, quote_hash)
);
CREATE TABLE IF NOT EXISTS sess_edits (
    id TEXT PRIMARY KEY, level TEXT NOT NULL, owner TEXT NOT NULL, before_version INTEGER,
    after_version INTEGER NOT NULL, journal_run TEXT, created_at TEXT NOT NULL, undone_by TEXT
);
CREATE TABLE IF NOT EXISTS sess_seen (
    session_id TEXT NOT NULL, level TEXT NOT NULL, key TEXT NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (session_id, level, key)
);
"""


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sess_files)")}
    if "broken" not in cols:  # file line numbers that are not JSON (a JSON list)
        _add_column(conn, "sess_files", "broken TEXT")
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sess_memory_sources)")}
    if "messages" not in cols:  # stable references of a source's messages (refs.py)
        _add_column(conn, "sess_memory_sources", "messages TEXT")


def _add_column(conn: sqlite3.Connection, table: str, column: str) -> None:
    try:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    except sqlite3.OperationalError as exc:  # another process added it first
        if "duplicate column" not in str(exc).lower():
            raise


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; rolls back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        db_rollback(conn)
        raise
    conn.execute("COMMIT")


# -- references -------------------------------------------------------------------------

_REF_RE = re.compile(r"^(session|project|global)(?::(.+?))?@v(\d+)$")
MAX_VERSION = 2**63 - 1


def memory_ref(level: str, owner: str, version: int) -> str:
    """``session:<id>@v3``, ``project:<id>@v2``, ``global@v5``."""
    return f"global@v{version}" if level == "global" else f"{level}:{owner}@v{version}"


def parse_memory_ref(ref: str) -> tuple[str, str, int]:
    m = _REF_RE.match(ref.strip())
    if not m:
        raise InputError(
            f"{ref!r} is not a memory reference (session:ID@vN, project:ID@vN or global@vN)"
        )
    level, owner, version = m.group(1), m.group(2) or "", int(m.group(3))
    if version > MAX_VERSION:  # SQLite integers are 64-bit: no version is that high
        raise InputError(f"{ref!r}: version {version} is out of range (at most {MAX_VERSION})")
    if level != "global" and not owner:
        raise InputError(f"{ref!r} names no {level}")
    return level, owner, version


# -- versions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    id: int
    level: str
    owner: str
    version: int
    text: str
    created_at: str
    model: str | None = None

    @property
    def ref(self) -> str:
        return memory_ref(self.level, self.owner, self.version)


@dataclass(frozen=True)
class Source:
    kind: str  # messages | raw | memory | summary
    ref: str
    from_idx: int | None = None
    to_idx: int | None = None
    digest: str | None = None
    preview: str = ""
    messages: tuple[tuple[str, str], ...] = ()  # (stable message ref, text hash) it covers


def version_of(row: sqlite3.Row) -> Version:
    """A ``sess_memories`` row as a Version."""
    return Version(
        row["id"],
        row["level"],
        row["owner"],
        row["version"],
        row["text"],
        row["created_at"],
        row["model"],
    )


def latest(conn: sqlite3.Connection, level: str, owner: str) -> Version | None:
    row = conn.execute(
        "SELECT * FROM sess_memories WHERE level=? AND owner=? ORDER BY version DESC LIMIT 1",
        (level, owner),
    ).fetchone()
    return version_of(row) if row else None


def get_version(conn: sqlite3.Connection, level: str, owner: str, version: int) -> Version | None:
    row = conn.execute(
        "SELECT * FROM sess_memories WHERE level=? AND owner=? AND version=?",
        (level, owner, version),
    ).fetchone()
    return version_of(row) if row else None


def latest_all(conn: sqlite3.Connection, level: str) -> list[Version]:
    rows = conn.execute(
        "SELECT m.* FROM sess_memories m JOIN (SELECT owner, max(version) v FROM sess_memories"
        " WHERE level=? GROUP BY owner) x ON m.owner = x.owner AND m.version = x.v"
        " WHERE m.level=? ORDER BY m.owner",
        (level, level),
    ).fetchall()
    return [version_of(r) for r in rows]


def insert_version(
    conn: sqlite3.Connection,
    level: str,
    owner: str,
    text: str,
    sources: list[Source],
    *,
    now_iso: str,
    run_id: str | None,
    model: str | None,
) -> Version:
    """Insert the next immutable version and its sources (call inside ``transaction``).

    The number is past every version this memory had, also those lost with a corrupt
    database (``version_floor``), so an old reference never names a new text."""
    row = conn.execute(
        "SELECT coalesce(max(version), 0) FROM sess_memories WHERE level=? AND owner=?",
        (level, owner),
    ).fetchone()
    version = max(int(row[0]), version_floor(conn, level, owner)) + 1
    cur = conn.execute(
        "INSERT INTO sess_memories (level, owner, version, text, created_at, run_id, model)"
        " VALUES (?,?,?,?,?,?,?)",
        (level, owner, version, text, now_iso, run_id, model),
    )
    mid = int(cur.lastrowid or 0)
    conn.executemany(
        _INSERT_SOURCE,
        [_source_row(mid, i, s) for i, s in enumerate(sources)],
    )
    return Version(mid, level, owner, version, text, now_iso, model)


def publish_version(
    conn: sqlite3.Connection,
    level: str,
    owner: str,
    text: str,
    sources: list[Source],
    *,
    now_iso: str,
    run_id: str | None,
    model: str | None,
) -> tuple[Version, bool]:
    """One published version per memory per run, however many batches it takes: when the
    latest version was made by this same run, it grows (its text replaced, the new sources
    appended) instead of a new version being added. Returns (version, whether it is new).
    Call inside ``transaction``; a version is fixed once its run has moved on."""
    row = conn.execute(
        "SELECT * FROM sess_memories WHERE level=? AND owner=? ORDER BY version DESC LIMIT 1",
        (level, owner),
    ).fetchone()
    if row is None or run_id is None or row["run_id"] != run_id:
        return (
            insert_version(
                conn, level, owner, text, sources, now_iso=now_iso, run_id=run_id, model=model
            ),
            True,
        )
    mid = int(row["id"])
    conn.execute("UPDATE sess_memories SET text=?, created_at=? WHERE id=?", (text, now_iso, mid))
    start = conn.execute(
        "SELECT coalesce(max(seq), -1) + 1 FROM sess_memory_sources WHERE memory_id=?", (mid,)
    ).fetchone()[0]
    conn.executemany(
        _INSERT_SOURCE,
        [
            _source_row(mid, start + i, s)
            for i, s in enumerate(x for x in sources if x.kind != "previous")
        ],
    )
    return Version(mid, level, owner, int(row["version"]), text, now_iso, model), False


_INSERT_SOURCE = (
    "INSERT INTO sess_memory_sources"
    " (memory_id, seq, kind, ref, from_idx, to_idx, digest, preview, messages)"
    " VALUES (?,?,?,?,?,?,?,?,?)"
)


def _source_row(mid: int, seq: int, s: Source) -> tuple[object, ...]:
    msgs = json.dumps([list(m) for m in s.messages]) if s.messages else None
    return (mid, seq, s.kind, s.ref, s.from_idx, s.to_idx, s.digest, redact(s.preview)[:200], msgs)


def version_sources(conn: sqlite3.Connection, memory_id: int) -> list[Source]:
    rows = conn.execute(
        "SELECT * FROM sess_memory_sources WHERE memory_id=? ORDER BY seq", (memory_id,)
    ).fetchall()
    return [
        Source(
            r["kind"],
            r["ref"],
            r["from_idx"],
            r["to_idx"],
            r["digest"],
            r["preview"] or "",
            _messages(r["messages"]),
        )
        for r in rows
    ]


def _messages(value: str | None) -> tuple[tuple[str, str], ...]:
    try:
        items = json.loads(value) if value else []
    except ValueError:
        return ()
    return tuple((str(m[0]), str(m[1])) for m in items if isinstance(m, list) and len(m) == 2)


def uplinks(conn: sqlite3.Connection, level: str, owner: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT child, child_version FROM sess_uplinks WHERE level=? AND owner=?", (level, owner)
    ).fetchall()
    return {r["child"]: r["child_version"] for r in rows}


def set_uplink(conn: sqlite3.Connection, level: str, owner: str, child: str, version: int) -> None:
    conn.execute(
        "INSERT INTO sess_uplinks (level, owner, child, child_version) VALUES (?,?,?,?)"
        " ON CONFLICT (level, owner, child) DO UPDATE SET child_version = excluded.child_version",
        (level, owner, child, version),
    )


# -- progress and state -----------------------------------------------------------------


def progress(conn: sqlite3.Connection, session_id: str) -> dict[str, int]:
    row = conn.execute("SELECT * FROM sess_progress WHERE session_id=?", (session_id,)).fetchone()
    if row is None:
        return {"summary_through": 0, "summary_turns": 0, "raw_through": 0}
    return {k: int(row[k] or 0) for k in ("summary_through", "summary_turns", "raw_through")}


def set_progress(conn: sqlite3.Connection, session_id: str, now_iso: str, **values: int) -> None:
    current = progress(conn, session_id)
    current.update(values)
    conn.execute(
        "INSERT INTO sess_progress"
        " (session_id, summary_through, summary_turns, raw_through, updated_at)"
        " VALUES (?,?,?,?,?) ON CONFLICT (session_id) DO UPDATE SET"
        " summary_through=excluded.summary_through, summary_turns=excluded.summary_turns,"
        " raw_through=excluded.raw_through, updated_at=excluded.updated_at",
        (
            session_id,
            current["summary_through"],
            current["summary_turns"],
            current["raw_through"],
            now_iso,
        ),
    )


def version_floor(conn: sqlite3.Connection, level: str, owner: str) -> int:
    """The highest version number known to have existed (0 when none was lost)."""
    value = get_state(conn, f"version_floor:{level}:{owner}")
    return int(value) if value and value.isdigit() else 0


def raise_version_floor(conn: sqlite3.Connection, level: str, owner: str, version: int) -> None:
    if version > version_floor(conn, level, owner):
        set_state(conn, f"version_floor:{level}:{owner}", str(version))


def get_state(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM sess_state WHERE key=?", (key,)).fetchone()
    return row[0] if row else None


def set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO sess_state (key, value) VALUES (?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value=excluded.value",
        (key, value),
    )


def last_run(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT * FROM sess_runs WHERE status != 'running'"
        " ORDER BY started_at DESC, rowid DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["report"] = json.loads(out["report"]) if out.get("report") else None
    return out
