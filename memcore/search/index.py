"""The memory search index: incremental FTS5 + sparse hashing vectors over markdown chunks.

The index lives in ``memory/.dreams/memcore.sqlite`` (memcore's own folder for the kinds
whose folder another tool owns) and covers MEMORY.md, every markdown file under ``memory/``
except ``memory/.dreams/``, and the kind's other long-term files
(:func:`memcore.workspace.layouts.indexed_files`: a Claude Code folder's topic files, with
their front matter, and CLAUDE.md files; Codex's memory_summary.md; Hermes' USER.md).

Before each search, files whose size or mtime changed are re-read; only those whose content
hash changed are re-chunked (a file modified within the last two seconds is re-hashed on the
next search too, so a same-size edit inside one mtime tick is never missed); unchanged chunks
of a re-chunked file keep their rows and only move their line range. A file with NUL bytes or
invalid UTF-8 is dropped from the index and named in the warnings; it never fails a search.
Files are cut into chunks by :mod:`memcore.search.chunks`.

The tables (``search_files``, ``search_chunks``, ``search_fts``, ``search_meta``) live in
``memory/.dreams/memcore.sqlite``; bucket document frequencies are kept up to date in
``search_meta`` so the hashing IDF is always the current corpus's, with no re-embedding.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from memcore.errors import WorkspaceError
from memcore.search.build import INSERT_BATCH, build_rows, chunk_rows, write_rows
from memcore.search.chunks import Chunk, chunk_markdown, fts_text
from memcore.search.dense import mark_changed
from memcore.search.watch import ScanWatch
from memcore.workspace import safe_read
from memcore.workspace.core import Workspace
from memcore.workspace.db import rollback_quietly as db_rollback
from memcore.workspace.layouts import indexed_files
from memcore.workspace.progress import Progress
from memcore.workspace.progress import report as report_progress

SCHEMA_VERSION = "2"
RACY_NS = 2_000_000_000  # files modified this recently are re-hashed on the next update
INDEX_LABEL = "Indexing memory"


def _ensure_schema(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value)")
    row = conn.execute("SELECT value FROM search_meta WHERE key = 'schema'").fetchone()
    if row is not None and row[0] == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT value FROM search_meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            for table in ("search_fts", "search_chunks", "search_files"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute("DELETE FROM search_meta")
            conn.execute(
                "CREATE TABLE search_files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER,"
                " sha1 TEXT, chunks INTEGER, error TEXT)"
            )
            conn.execute(
                "CREATE TABLE search_chunks (id INTEGER PRIMARY KEY, path TEXT NOT NULL,"
                " start_line INTEGER, end_line INTEGER, text TEXT, context TEXT,"
                " vidx BLOB, vval BLOB)"
            )
            conn.execute("CREATE INDEX search_chunks_path ON search_chunks(path)")
            conn.execute(
                "CREATE VIRTUAL TABLE search_fts USING fts5(text, context, content='search_chunks',"
                " content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')"
            )
            conn.execute("INSERT INTO search_meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        db_rollback(conn)
        raise


@dataclass
class IndexReport:
    """What one incremental index update did."""

    files: int = 0  # markdown files in the index after the update
    chunks: int = 0
    rechunked: int = 0  # files whose content changed and were chunked again
    rehashed: int = 0  # files re-read because their size or mtime changed (or were recent)
    removed: int = 0  # files deleted since the last update
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    duration_ms: float = 0.0


def load_df(conn: sqlite3.Connection) -> tuple[Any, int]:
    import numpy as np

    from memcore.search.embeddings.hashing import DIM

    row = conn.execute("SELECT value FROM search_meta WHERE key = 'df'").fetchone()
    n_row = conn.execute("SELECT value FROM search_meta WHERE key = 'n'").fetchone()
    if row is None or n_row is None:
        return np.zeros(DIM, dtype=np.int64), 0
    return np.frombuffer(row[0], dtype=np.int64).copy(), int(n_row[0])


def _delete_chunks(conn: sqlite3.Connection, path: str, df: Any) -> int:
    import numpy as np

    rows = conn.execute(
        "SELECT id, text, context, vidx FROM search_chunks WHERE path = ?", (path,)
    ).fetchall()
    for cid, text, context, vidx in rows:
        conn.execute(
            "INSERT INTO search_fts(search_fts, rowid, text, context) VALUES ('delete', ?, ?, ?)",
            (cid, fts_text(text), fts_text(context)),
        )
        df[np.frombuffer(vidx, dtype=np.uint16).astype(np.intp)] -= 1
    conn.execute("DELETE FROM search_chunks WHERE path = ?", (path,))
    return len(rows)


def _insert_chunks(conn: sqlite3.Connection, fresh: list[tuple[str, Chunk]], df: Any) -> None:
    """Insert new chunks ``(path, chunk)`` of any files: their vectors in one batch, their
    rows and FTS entries with one statement each (ids assigned here, as SQLite would)."""
    if not fresh:
        return
    rows = chunk_rows(fresh, _next_id(conn))
    write_rows(conn, rows)
    df += rows.df


def _next_id(conn: sqlite3.Connection) -> int:
    """The first free chunk id: past every chunk, and past every chunk that still has model
    vectors (:mod:`memcore.search.dense` and :mod:`memcore.search.companion` drop those of
    deleted chunks only on their next sync, so a reused id would inherit a deleted chunk's
    vectors)."""
    (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM search_chunks").fetchone()
    for table in ("search_dense", "search_companion"):
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone():
            (vec_top,) = conn.execute(f"SELECT coalesce(max(chunk), 0) FROM {table}").fetchone()
            top = max(top, vec_top)
    return int(top) + 1


def _replace_chunks(
    conn: sqlite3.Connection, path: str, chunks: list[Chunk], df: Any
) -> tuple[int, list[Chunk]]:
    """Make the file's indexed chunks ``chunks``: (change in the chunk count, the chunks still
    to insert with :func:`_insert_chunks`).

    A chunk whose text and context did not change keeps its row, vector and FTS entry (only its
    line range moves), so an edit near the top of a long MEMORY.md re-indexes what changed.
    """
    import numpy as np

    old: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for cid, start, end, text, context in conn.execute(
        "SELECT id, start_line, end_line, text, context FROM search_chunks WHERE path = ?"
        " ORDER BY start_line",
        (path,),
    ):
        old.setdefault((text, context), []).append((cid, start, end))
    fresh: list[Chunk] = []
    moved: list[tuple[int, int, int]] = []
    for ch in chunks:
        rows = old.get((ch.text, ch.context))
        if rows:
            cid, start, end = rows.pop(0)
            if (start, end) != (ch.start_line, ch.end_line):
                moved.append((ch.start_line, ch.end_line, cid))
        else:
            fresh.append(ch)
    conn.executemany("UPDATE search_chunks SET start_line = ?, end_line = ? WHERE id = ?", moved)
    gone = [(cid, key) for key, rows in old.items() for cid, _, _ in rows]
    for cid, (text, context) in gone:
        vidx = conn.execute("SELECT vidx FROM search_chunks WHERE id = ?", (cid,)).fetchone()[0]
        conn.execute(
            "INSERT INTO search_fts(search_fts, rowid, text, context) VALUES ('delete', ?, ?, ?)",
            (cid, fts_text(text), fts_text(context)),
        )
        df[np.frombuffer(vidx, dtype=np.uint16).astype(np.intp)] -= 1
        conn.execute("DELETE FROM search_chunks WHERE id = ?", (cid,))
    return len(fresh) - len(gone), fresh


@dataclass
class ScanSpots:
    """What a scan walked, for :mod:`memcore.search.watch`: the folders whose events cover its
    files, and whether every file it found is a plain one (not a symlink, one hard link)."""

    folders: list[str] = field(default_factory=list)
    plain: bool = True


def _scan(
    ws: Workspace,
    cap: int | None = None,
    spots: ScanSpots | None = None,
    extra: list[str] | None = None,
) -> tuple[dict[str, tuple[str, os.stat_result]], list[tuple[str, str]]]:
    """Stat the files ``Workspace.markdown_files()`` lists, and the kind's other long-term
    files (``indexed_files``), keyed by workspace-relative path.

    The same walk (MEMORY.md, then ``memory/`` without hidden folders), done with
    ``os.scandir`` because resolving 1,000 paths alone costs more than a whole search. Every
    file goes through :func:`memcore.workspace.safe_read.check` (a symlink leading out, a FIFO,
    socket or device, a file over ``[search] max_file_bytes``: skipped and named). With
    ``spots`` it also notes the folders it walked (see :class:`ScanSpots`); ``extra`` is the
    kind's files when the caller has them already.
    """
    found: dict[str, tuple[str, os.stat_result]] = {}
    problems: list[tuple[str, str]] = []
    cap = cap if cap is not None else safe_read.max_file_bytes(ws)
    root = safe_read.real_root(ws)
    is_reg = stat.S_ISREG

    def add(rel: str, path: str, walked: bool, lst: os.stat_result | None = None) -> None:
        try:
            if not rel.isascii():  # the usual name needs no encoding to be known valid
                rel.encode("utf-8")
        except UnicodeEncodeError:
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            problems.append((shown, "file name is not valid UTF-8"))
            return
        if spots is not None:
            if not walked:
                spots.folders.append(os.path.dirname(path))
            try:
                own = lst if lst is not None else os.lstat(path)
            except OSError:
                spots.plain = False
            else:
                if not stat.S_ISREG(own.st_mode) or own.st_nlink != 1:
                    spots.plain = False
        if lst is not None and stat.S_ISREG(lst.st_mode) and lst.st_size <= cap:
            found[rel] = (path, lst)  # what check() decides for a plain file in a walked folder
            return
        try:
            ok = safe_read.check(
                ws, path, max_bytes=cap, root=root, parents_checked=walked, lst=lst
            )
        except safe_read.Unreadable as exc:
            problems.append((rel, exc.reason))
            return
        except OSError as exc:
            problems.append((rel, f"cannot stat: {exc.strerror}"))
            return
        found[rel] = (ok.path, ok.st)  # the resolved path: the read need not resolve it again

    if spots is not None:
        spots.folders.append(str(ws.root))  # MEMORY.md and memory/ appearing
    if os.path.lexists(ws.memory_md) and not ws.memory_md.is_dir():
        add("MEMORY.md", str(ws.memory_md), False)
    for rel in indexed_files(ws) if extra is None else extra:  # the kind's other files
        add(rel, str(ws.root / rel), False)
    stack = []
    if ws.memory_dir.is_dir():
        if safe_read._inside(os.path.realpath(ws.memory_dir), root):
            stack.append(("memory", str(ws.memory_dir)))
        else:
            problems.append(("memory", "a symlink that leads outside the workspace"))
    while stack:
        rel_dir, directory = stack.pop()
        if spots is not None:
            spots.folders.append(directory)
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            problems.append((rel_dir, f"cannot list: {exc.strerror}"))
            if spots is not None:
                spots.plain = False
            continue
        subdirs = []
        prefix = rel_dir + "/"
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if not name.startswith("."):
                    subdirs.append((prefix + name, entry.path))
            elif name.endswith(".md"):
                lst: os.stat_result | None
                try:
                    lst = entry.stat(follow_symlinks=False)
                except OSError:
                    lst = None  # check() stats it again and names what is wrong
                # the usual note, decided here as add() would (this loop runs per search)
                if (
                    lst is not None
                    and is_reg(lst.st_mode)
                    and lst.st_size <= cap
                    and name.isascii()
                ):
                    found[prefix + name] = (entry.path, lst)
                    if spots is not None and lst.st_nlink != 1:
                        spots.plain = False  # written through another name, elsewhere
                    continue
                add(prefix + name, entry.path, True, lst)
        stack.extend(reversed(subdirs))
    return found, problems


def _read_all(
    ws: Workspace, found: dict[str, tuple[str, os.stat_result]], rels: list[str], cap: int
) -> dict[str, str | WorkspaceError]:
    """The texts of ``rels`` (or why each cannot be read), read before any write lock."""
    out: dict[str, str | WorkspaceError] = {}
    for rel in rels:
        try:
            path, st = found[rel]
            data = safe_read.read_checked(rel, safe_read.Readable(path, st), cap)
            out[rel] = safe_read.decode_text(rel, data)
        except WorkspaceError as exc:
            out[rel] = exc
        except OSError as exc:
            out[rel] = WorkspaceError(f"cannot read: {exc.strerror or exc}")
    return out


def _is_kind_file(rel: str) -> bool:
    """A file of the kind's long-term memory (:func:`indexed_files`), not MEMORY.md or a note:
    its front matter is indexed too."""
    return rel != "MEMORY.md" and not rel.startswith("memory/")


def update_index(
    conn: sqlite3.Connection,
    ws: Workspace,
    *,
    progress: Progress | None = None,
    watch: ScanWatch | None = None,
) -> IndexReport:
    """Bring the index up to date with the workspace files (incremental).

    ``progress(INDEX_LABEL, done, total)`` follows the files that are (re)read. With a
    ``watch`` (a long-lived process), the last scan of the files is reused while nothing it
    walked changed (:mod:`memcore.search.watch`)."""
    t0 = time.perf_counter()
    _ensure_schema(conn)
    report = IndexReport()
    cap = safe_read.max_file_bytes(ws)
    found, problems = _watched_scan(ws, cap, watch)
    report.skipped.extend(problems)
    token = None
    if watch is not None:
        # the files as last scanned, and an index no update changed since: nothing to compare
        row = conn.execute("SELECT value FROM search_meta WHERE key = 'files_gen'").fetchone()
        token = None if row is None else row[0]
        with _settled_lock:
            settled = _settled.get(str(ws.db_path))
        if (
            settled is not None
            and settled[0] is found
            and token is not None
            and settled[1] == token
        ):
            report.files, report.chunks = settled[2], settled[3]
            report.skipped.extend(settled[4])
            report.duration_ms = (time.perf_counter() - t0) * 1000
            return report

    def file_rows() -> list[tuple[str, int, int, str | None]]:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples: this runs on every search
        return cur.execute("SELECT path, size, mtime_ns, error FROM search_files").fetchall()

    def dirty(rows: list[tuple[str, int, int, str | None]]) -> tuple[list[str], list[str]]:
        stats = {r[0]: (r[1], r[2]) for r in rows}
        changed = [
            rel for rel, (_, st) in found.items() if stats.get(rel) != (st.st_size, st.st_mtime_ns)
        ]
        return changed, [rel for rel in stats if rel not in found]

    rows = file_rows()  # one read serves the change check, the errors and the count
    changed, removed = dirty(rows)
    if changed or removed:
        # Files are read before the write transaction: a slow disk never holds the lock.
        texts = _read_all(ws, found, changed, cap)
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another process may have updated it meanwhile
            changed, removed = dirty(file_rows())
            missed = [rel for rel in changed if rel not in texts]
            texts.update(_read_all(ws, found, missed, cap))  # files changed in between (rare)
            stored = {r["path"]: r for r in conn.execute("SELECT * FROM search_files")}
            _apply_changes(conn, found, stored, changed, removed, report, texts, progress)
            conn.execute("COMMIT")
        except BaseException:
            db_rollback(conn)
            raise
        rows = file_rows()
    failed = [(r[0], r[3]) for r in rows if r[3] is not None]
    shown = [(path, err) for path, err in failed if path in found]
    report.skipped.extend(shown)
    report.files = len(rows) - len(failed)
    report.chunks = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
    if token is not None and not (changed or removed):
        with _settled_lock:
            _settled[str(ws.db_path)] = (found, token, report.files, report.chunks, shown)
    report.duration_ms = (time.perf_counter() - t0) * 1000
    return report


#: By database file: (the kept scan, the ``files_gen`` token, files, chunks, skipped) of the
#: last update that found the index matching that scan; while both stay the same, the next
#: update has nothing to compare (``files_gen`` changes with every update that writes).
_settled: dict[str, tuple[Any, str, int, int, list[tuple[str, str]]]] = {}
_settled_lock = threading.Lock()


def _watched_scan(
    ws: Workspace, cap: int, watch: ScanWatch | None
) -> tuple[dict[str, tuple[str, os.stat_result]], list[tuple[str, str]]]:
    """:func:`_scan`, or the last one ``watch`` kept for the workspace (treated read-only)."""
    if watch is None:
        return _scan(ws, cap)
    extra = indexed_files(ws)
    name, key = str(ws.root), (cap, tuple(extra))
    kept = watch.kept(name, key)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    generation = watch.begin(name)
    if generation < 0:  # no inotify here (or the pool was closed): scan every time
        return _scan(ws, cap, extra=extra)
    spots = ScanSpots()
    scanned = _scan(ws, cap, spots, extra)
    if spots.plain:
        watch.keep(name, generation, spots.folders, scanned, key)
    return scanned


def _apply_changes(
    conn: sqlite3.Connection,
    found: dict[str, tuple[str, os.stat_result]],
    stored: dict[str, sqlite3.Row],
    changed: list[str],
    removed: list[str],
    report: IndexReport,
    texts: dict[str, str | WorkspaceError],
    progress: Progress | None = None,
) -> None:
    df, n = load_df(conn)
    now_ns = time.time_ns()
    pending: list[tuple[str, Chunk]] = []  # new chunks of any files, inserted a batch at a time
    touched = False  # chunks of a file that became unreadable were dropped
    for rel in removed:
        n -= _delete_chunks(conn, rel, df)
        conn.execute("DELETE FROM search_files WHERE path = ?", (rel,))
        report.removed += 1
    # Files with no chunks indexed yet are chunked and hashed on a helper thread (build_rows)
    # while this thread writes; the others keep their unchanged rows, which needs the database.
    indexed = {r[0] for r in conn.execute("SELECT DISTINCT path FROM search_chunks")}
    new_files: list[tuple[str, str, bool]] = []
    file_rows: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime, sha1) of new_files
    done, told = 0, -1

    def tell() -> None:  # progress after each file written (new files: after each batch)
        nonlocal told
        if done != told:
            report_progress(progress, INDEX_LABEL, done, len(changed))
            told = done

    for rel in changed:
        tell()
        _path, st = found[rel]
        # A file modified within RACY_NS of now might change again inside the same mtime tick
        # at the same size: store an mtime that never matches so it is re-hashed next time.
        mtime = st.st_mtime_ns if now_ns - st.st_mtime_ns > RACY_NS else -1
        report.rehashed += 1
        old = stored.get(rel)
        text = texts[rel]
        if isinstance(text, WorkspaceError):
            reason = text.reason if isinstance(text, safe_read.Unreadable) else str(text)
            dropped = _delete_chunks(conn, rel, df) if rel in indexed else 0
            touched = touched or dropped > 0
            n -= dropped
            conn.execute(
                "INSERT OR REPLACE INTO search_files VALUES (?, ?, ?, NULL, 0, ?)",
                (rel, st.st_size, mtime, reason),
            )
            done += 1
            continue
        sha1 = hashlib.sha1(text.encode("utf-8")).hexdigest()
        if old is not None and old["sha1"] == sha1 and old["error"] is None:
            if (old["size"], old["mtime_ns"]) != (st.st_size, mtime):
                conn.execute(
                    "UPDATE search_files SET size = ?, mtime_ns = ? WHERE path = ?",
                    (st.st_size, mtime, rel),
                )
            done += 1
            continue
        report.rechunked += 1
        if rel not in indexed:
            new_files.append((rel, text, _is_kind_file(rel)))
            file_rows[rel] = (st.st_size, mtime, sha1)
            continue
        chunks = chunk_markdown(text, front_matter=_is_kind_file(rel))
        delta, fresh = _replace_chunks(conn, rel, chunks, df)
        n += delta
        pending.extend((rel, ch) for ch in fresh)
        conn.execute(
            "INSERT OR REPLACE INTO search_files VALUES (?, ?, ?, ?, ?, NULL)",
            (rel, st.st_size, mtime, sha1, len(chunks)),
        )
        done += 1
        if len(pending) >= INSERT_BATCH:
            _insert_chunks(conn, pending, df)
            pending = []
    _insert_chunks(conn, pending, df)
    if new_files:
        for rows in build_rows(new_files, _next_id(conn)):
            write_rows(conn, rows)
            df += rows.df
            n += len(rows.chunks)
            for rel, count in rows.files:
                size, mtime, sha1 = file_rows[rel]
                conn.execute(
                    "INSERT OR REPLACE INTO search_files VALUES (?, ?, ?, ?, ?, NULL)",
                    (rel, size, mtime, sha1, count),
                )
            done += len(rows.files)
            tell()
    if changed:
        done = len(changed)
        tell()
    if report.rechunked or report.removed or touched:
        mark_changed(conn)  # the model vectors of memcore.search.dense catch up
    conn.execute(
        "INSERT OR REPLACE INTO search_meta VALUES ('df', ?)", (df.astype("int64").tobytes(),)
    )
    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('n', ?)", (n,))
    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('files_gen', ?)", (uuid.uuid4().hex,))


def open_index(ws: Workspace) -> sqlite3.Connection:
    """The workspace database with the search tables in place."""
    from memcore.workspace.db import connect

    try:
        conn = connect(ws.db_path)
    except (OSError, sqlite3.Error) as exc:
        raise WorkspaceError(f"cannot open the search index {ws.db_path}: {exc}") from None
    _ensure_schema(conn)
    return conn


# -- status -----------------------------------------------------------------------------


def _deep_mismatches(
    ws: Workspace, found: dict[str, tuple[str, os.stat_result]], stored: dict[str, sqlite3.Row]
) -> int:
    """Files whose stat matches the index but whose content hash does not."""
    count = 0
    for rel, (path, st) in found.items():
        row = stored.get(rel)
        if row is None or row["error"] is not None or row["size"] != st.st_size:
            continue
        if row["mtime_ns"] not in (st.st_mtime_ns, -1):
            continue
        try:
            data = safe_read.read_bytes(ws, path)
        except (WorkspaceError, OSError):
            continue
        if hashlib.sha1(data).hexdigest() != row["sha1"]:
            count += 1
    return count


def index_stats(ws: Workspace, *, deep: bool = False) -> dict[str, Any]:
    """Index figures for ``memory status`` without updating the index.

    ``stale`` counts files that are new, changed or deleted since the last update (the next
    search re-indexes them); ``fresh`` is true when there are none. With ``deep`` the content of
    every file whose size and mtime look unchanged is hashed too and compared with the index.
    """
    db = ws.db_path
    out: dict[str, Any] = {
        "path": str(db),
        "exists": db.exists(),
        "dbBytes": db.stat().st_size if db.exists() else 0,
        "files": 0,
        "chunks": 0,
        "stale": 0,
        "fresh": False,
        "skipped": [],
    }
    found, problems = _scan(ws)
    if not db.exists():
        out["stale"] = len(found)
        out["fresh"] = not found
        return out
    conn = open_index(ws)
    try:
        stored = {r["path"]: r for r in conn.execute("SELECT * FROM search_files")}
        out["chunks"] = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
    finally:
        conn.close()
    out["files"] = sum(1 for r in stored.values() if r["error"] is None)
    stale = sum(
        1
        for rel, (_, st) in found.items()
        if rel not in stored
        or stored[rel]["size"] != st.st_size
        or stored[rel]["mtime_ns"] not in (st.st_mtime_ns, -1)
    )
    stale += sum(1 for rel in stored if rel not in found)
    if deep:
        stale += _deep_mismatches(ws, found, stored)
    out["stale"] = stale
    out["fresh"] = stale == 0
    out["skipped"] = [{"path": p, "reason": r} for p, r in problems] + [
        {"path": rel, "reason": r["error"]}
        for rel, r in stored.items()
        if r["error"] is not None and rel in found
    ]
    for suffix in ("-wal",):
        side = db.with_name(db.name + suffix)
        if side.exists():
            out["dbBytes"] += side.stat().st_size
    return out
