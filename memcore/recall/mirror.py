"""A queryable mirror of the recall store in ``memcore.sqlite``.

The JSON file stays the source of truth (and OpenClaw-compatible). Parsing a 100,000-entry
store costs most of a second, so ranking and status read this mirror instead. The mirror
records the size, mtime and inode of the JSON file it reflects; when they differ from the file
on disk (another tool wrote it, or a crash fell between the two writes) it is brought along
from the file before use: only the entries whose content hash (``raw_hash``: length and CRC-32
of the entry's block in the file, :mod:`memcore.recall.blocks`) differs from the mirror's are
parsed, normalised and written, in one transaction (:func:`sync_blocks`; a file in another
layout is parsed whole, :func:`sync_raw`). Writers that hold the workspace lock update it in
place.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from memcore.recall import blocks
from memcore.recall.entries import normalize_entry, unique_user_queries
from memcore.recall.scoring import frequency, relevance
from memcore.workspace import db
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace, is_daily_note_path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_index (
    key TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    snippet TEXT NOT NULL,
    recall_count INTEGER NOT NULL,
    total_score REAL NOT NULL,
    max_score REAL NOT NULL,
    n_queries INTEGER NOT NULL,
    first_recalled TEXT NOT NULL,
    last_recalled TEXT NOT NULL,
    last_epoch REAL,
    promoted_at TEXT,
    eligible INTEGER NOT NULL,
    freq REAL NOT NULL,
    rel REAL NOT NULL,
    raw_hash INTEGER,
    last_us INTEGER
);
CREATE INDEX IF NOT EXISTS recall_index_order ON recall_index (path, key);
CREATE TABLE IF NOT EXISTS recall_index_meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    size INTEGER, mtime_ns INTEGER, ino INTEGER, invalid INTEGER NOT NULL DEFAULT 0,
    rules INTEGER NOT NULL DEFAULT 2
);
"""
#: Version of the rules the derived columns follow (``eligible``: which paths are daily notes;
#: 2 = split days and sub-folders). A mirror built under other rules is dropped and rebuilt.
RULES = 2

Stat = tuple[int, int, int] | None


def file_stat(ws: Workspace) -> Stat:
    try:
        st = os.stat(ws.store_path)
    except FileNotFoundError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def connect(ws: Workspace) -> sqlite3.Connection:
    conn = db.connect(ws.db_path)
    _ensure(conn)
    return conn


def memory_connect() -> sqlite3.Connection:
    """An empty mirror held in memory, for readers that must not create or change a file."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    _ensure(conn)
    return conn


def _ensure(conn: sqlite3.Connection) -> None:
    cols = {r[1] for r in conn.execute("PRAGMA table_info(recall_index)")}
    meta = {r[1] for r in conn.execute("PRAGMA table_info(recall_index_meta)")}
    stale = bool(cols) and ("last_us" not in cols or "rules" not in meta)
    if not stale and "rules" in meta:
        row = conn.execute("SELECT rules FROM recall_index_meta WHERE id = 1").fetchone()
        stale = row is not None and row[0] != RULES
    if stale:  # an older layout or older rules: the mirror is rebuildable
        conn.executescript("DROP TABLE recall_index; DROP TABLE IF EXISTS recall_index_meta;")
    conn.executescript(_SCHEMA)


def current_meta(conn: sqlite3.Connection) -> Stat:
    """The stat of the store file the mirror reflects (None: unknown, rebuild before use)."""
    return _meta(conn)


def _meta(conn: sqlite3.Connection) -> Stat:
    row = conn.execute("SELECT size, mtime_ns, ino FROM recall_index_meta WHERE id = 1").fetchone()
    if row is None or row[0] is None:
        return None
    return (row[0], row[1], row[2])


def _epoch(iso: str) -> float | None:
    dt = parse_iso(iso)
    return dt.timestamp() if dt is not None else None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_us(dt: datetime) -> int:
    """Whole microseconds since 1970 (exact, so columnar scoring gets the same ages as
    datetime arithmetic)."""
    return (dt - _EPOCH) // timedelta(microseconds=1)


def _last_us(iso: str) -> int | None:
    dt = parse_iso(iso)
    return epoch_us(dt) if dt is not None else None


def _promoted_column(value: Any) -> str | None:
    """``promotedAt`` as the mirror keeps it: None unless a non-empty string (OpenClaw's rule);
    an ISO time in memcore's millisecond form, any other string as written."""
    if not isinstance(value, str) or not value:
        return None
    dt = parse_iso(value)
    return iso_ms(dt) if dt is not None else value


def _row(key: str, e: Mapping[str, Any], h: int | None = None) -> tuple[Any, ...]:
    count = e["recallCount"]
    promoted = _promoted_column(e.get("promotedAt"))
    return (
        key,
        e["path"],
        e["startLine"],
        e["endLine"],
        e.get("snippet") or "",
        count,
        e["totalScore"],
        e["maxScore"],
        unique_user_queries(e),
        e["firstRecalledAt"],
        e["lastRecalledAt"],
        _epoch(e["lastRecalledAt"]),
        promoted,
        1 if e.get("source") == "memory" and is_daily_note_path(e["path"]) else 0,
        frequency(count),
        relevance(e["totalScore"], count),
        h,
        _last_us(e["lastRecalledAt"]),
    )


_UPSERT = "INSERT OR REPLACE INTO recall_index VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"


def _set_meta(conn: sqlite3.Connection, stat: Stat, invalid: int | None = None) -> None:
    size, mtime, ino = stat if stat else (None, None, None)
    if invalid is None:
        row = conn.execute("SELECT invalid FROM recall_index_meta WHERE id = 1").fetchone()
        invalid = row[0] if row else 0
    conn.execute(
        "INSERT OR REPLACE INTO recall_index_meta (id, size, mtime_ns, ino, invalid) "
        "VALUES (1, ?, ?, ?, ?)",
        (size, mtime, ino, invalid),
    )


def replace_all(
    conn: sqlite3.Connection,
    entries: Mapping[str, Mapping[str, Any]],
    stat: Stat,
    invalid: int = 0,
) -> None:
    """Make the mirror hold exactly ``entries`` (normalised) for the file with ``stat``;
    ``invalid`` is how many entries of the file normalisation dropped."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM recall_index")
        conn.executemany(_UPSERT, (_row(k, e) for k, e in entries.items()))
        _set_meta(conn, stat, invalid)
        conn.execute("COMMIT")
    except BaseException:
        db.rollback_quietly(conn)
        raise


def sync_raw(
    conn: sqlite3.Connection,
    entries: Mapping[str, Any],
    stat: Stat,
    now_iso: str,
    *,
    as_written: bool = False,
) -> int:
    """Make the mirror reflect the file with ``stat`` whose raw (un-normalised) entries are
    ``entries``: entries whose content hash matches their row are left alone, the others are
    normalised and upserted, rows of keys gone (or now invalid) deleted, in one transaction.
    Returns how many rows changed. Costs one dump of the entries beyond the parse."""
    hashes = blocks.hashes_of(entries, as_written=as_written)
    done = _sync(conn, ((k, h, k) for k, h in hashes.items()), entries.__getitem__, stat, now_iso)
    assert done is not None  # the entries are parsed already: none can fail to parse
    return done


def sync_blocks(
    conn: sqlite3.Connection, found: blocks.Blocks, stat: Stat, now_iso: str
) -> int | None:
    """:func:`sync_raw` for a file split into blocks (:func:`memcore.recall.blocks.split`):
    only the blocks whose hash differs from their row are parsed. Returns how many rows
    changed, or None (nothing written) when such a block does not parse: read the file whole
    then, which handles a broken file."""
    items = zip(found.keys, found.hashes, range(len(found.keys)), strict=True)
    return _sync(conn, items, found.value, stat, now_iso)


def _sync(
    conn: sqlite3.Connection,
    items: Iterable[tuple[str, int | None, Any]],
    value: Callable[[Any], Any],
    stat: Stat,
    now_iso: str,
) -> int | None:
    """The diff of both syncs: ``items`` are (key, content hash, where its raw entry is);
    ``value(where)`` reads one, only for the keys whose hash differs from their row. None
    (nothing written) when a raw entry does not parse."""
    old = _hashes(conn)
    rows: list[tuple[Any, ...]] = []
    gone: list[str] = []
    invalid = 0
    for k, h, where in items:
        was = old.pop(k, -1)
        if was == h:
            continue
        try:
            raw = value(where)
        except orjson.JSONDecodeError:
            return None
        n = normalize_entry(k, raw, now_iso)
        if n is None:
            invalid += 1
            if was != -1:
                gone.append(k)
        else:
            rows.append(_row(k, n, h))
    gone.extend(old)
    _apply(conn, rows, gone, stat, invalid)
    return len(rows) + len(gone)


def _hashes(conn: sqlite3.Connection) -> dict[str, int | None]:
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: a Row per entry costs a third more
    try:
        return dict(cur.execute("SELECT key, raw_hash FROM recall_index"))
    finally:
        cur.close()


def _apply(
    conn: sqlite3.Connection, rows: list[tuple[Any, ...]], gone: list[str], stat: Stat, invalid: int
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("DELETE FROM recall_index WHERE key = ?", ((k,) for k in gone))
        conn.executemany(_UPSERT, rows)
        _set_meta(conn, stat, invalid)
        conn.execute("COMMIT")
    except BaseException:
        db.rollback_quietly(conn)
        raise


def update_after_write(
    ws: Workspace,
    entries: Mapping[str, Any],
    *,
    before: Stat,
    now_iso: str,
    changed: Iterable[str] | None = None,
    removed: Iterable[str] = (),
    complete: bool = True,
    conn: sqlite3.Connection | None = None,
) -> None:
    """After a locked write of the store: upsert ``changed`` keys (all when None) and delete
    ``removed``. If the mirror did not reflect the file as it was ``before`` the write, rebuild
    it from ``entries`` when they are ``complete``, else mark it stale so the next reader
    rebuilds it. Entries are normalised here (junk is left out)."""
    after = file_stat(ws)
    own = conn is None
    conn = conn or connect(ws)
    try:
        if changed is not None and not complete and _meta(conn) != before:
            _set_meta(conn, None)
            return
        if changed is None or _meta(conn) != before:
            sync_raw(conn, entries, after, now_iso, as_written=True)
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("DELETE FROM recall_index WHERE key = ?", ((k,) for k in removed))
            rows = []
            for k in changed:
                raw = entries.get(k)
                n = normalize_entry(k, raw, now_iso)
                if n is not None:
                    rows.append(_row(k, n, blocks.entry_hash(k, raw, as_written=True)))
            conn.executemany(_UPSERT, rows)
            _set_meta(conn, after)
            conn.execute("COMMIT")
        except BaseException:
            db.rollback_quietly(conn)
            raise
    finally:
        if own:
            conn.close()


def row_entry(row: sqlite3.Row) -> dict[str, Any]:
    """A mirror row as the entry mapping scoring expects."""
    return {
        "key": row["key"],
        "path": row["path"],
        "startLine": row["start_line"],
        "endLine": row["end_line"],
        "source": "memory",
        "snippet": row["snippet"],
        "recallCount": row["recall_count"],
        "totalScore": row["total_score"],
        "maxScore": row["max_score"],
        "uniqueQueries": row["n_queries"],
        "firstRecalledAt": row["first_recalled"],
        "lastRecalledAt": row["last_recalled"],
        "promotedAt": row["promoted_at"],
    }


def counts(conn: sqlite3.Connection, day_start: datetime | None = None) -> dict[str, Any]:
    """Totals for status: entries, short-term (unpromoted eligible), promoted, promoted since
    ``day_start``, the last promotion, entries on files that are not daily notes (entries =
    short-term + promoted + those), and the invalid entries of the last full read."""
    since = iso_ms(day_start) if day_start is not None else "9999"
    row = conn.execute(
        """SELECT COUNT(*),
                  SUM(CASE WHEN eligible = 1 AND promoted_at IS NULL THEN 1 ELSE 0 END),
                  SUM(CASE WHEN eligible = 1 AND promoted_at IS NOT NULL THEN 1 ELSE 0 END),
                  SUM(CASE WHEN eligible = 1 AND promoted_at >= ? THEN 1 ELSE 0 END),
                  MAX(CASE WHEN eligible = 1 THEN promoted_at END),
                  SUM(CASE WHEN eligible = 0 THEN 1 ELSE 0 END)
           FROM recall_index""",
        (since,),
    ).fetchone()
    meta = conn.execute("SELECT invalid FROM recall_index_meta WHERE id = 1").fetchone()
    return {
        "entries": int(row[0] or 0),
        "shortTerm": int(row[1] or 0),
        "promoted": int(row[2] or 0),
        "promotedSince": int(row[3] or 0),
        "lastPromotedAt": row[4],
        "notDailyNote": int(row[5] or 0),
        "invalid": int(meta[0]) if meta else 0,
    }


def cap_victims(
    conn: sqlite3.Connection,
    count: int,
    keep: set[str],
    protect: Any,
) -> list[str]:
    """Keys the cap drops: promoted entries (oldest promotion first), then the fewest recalls
    and the oldest last recall; never ``keep`` keys nor unpromoted entries ``protect`` accepts."""
    victims: list[str] = []
    cur = conn.execute(
        "SELECT * FROM recall_index ORDER BY promoted_at IS NULL, promoted_at, recall_count, "
        "last_recalled"
    )
    for row in cur:
        if len(victims) >= count:
            break
        if row["key"] in keep:
            continue
        if row["promoted_at"] is None and protect is not None and protect(row_entry(row)):
            continue
        victims.append(row["key"])
    cur.close()
    return victims
