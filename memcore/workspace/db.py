"""The workspace database ``memory/.dreams/memcore.sqlite``: index, ledger, journal, state.

Each module owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS``.

Only a database that is really corrupt is set aside: SQLite says so (``SQLITE_CORRUPT``,
``SQLITE_NOTADB``) or ``PRAGMA quick_check`` finds a bad page. The check runs when the file
changed on disk since it was last checked (its state is kept in ``memcore.sqlite.checked``, so
an unchanged file is not checked by every process; one process checks a file at most once a
minute, as its own writes change it too), again after any query met a corrupt page
(:func:`mark_suspect`, called by :func:`translate`), and is deferred on the hot paths (a
search, a recording's fold: :func:`check_deferred`).
A database that is merely locked, read-only, on a full disk or failing with I/O errors is
reported as that (:class:`DatabaseError`, or :class:`DatabaseLocked` with exit 75) and never
moved. A corrupt file is linked to a unique ``memcore.sqlite.corrupt-<UTC>-<pid>-<n>`` name
under a quarantine lock (so concurrent commands never set aside the same file twice or to one
name), then every table that is not a rebuildable cache (the journal, ledger, review queue, job
and session state) is copied, row by row where it can be read, into the fresh database; what
could not be read is logged and kept
in ``db_quarantines`` for ``memory status``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from contextvars import ContextVar
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from memcore.errors import DatabaseError, DatabaseLocked

log = logging.getLogger(__name__)

#: Tables memcore rebuilds from files, never worth salvaging from a corrupt database.
CACHE_PREFIXES = ("search_", "recall_index", "embedding_cache", "sqlite_")
BUSY_TIMEOUT_MS = 30000
_busy_ms: ContextVar[int] = ContextVar("memcore_db_busy_ms", default=BUSY_TIMEOUT_MS)


@contextlib.contextmanager
def busy_timeout(ms: int) -> Iterator[None]:
    """Connections opened inside wait at most ``ms`` for a busy database (a search or a
    recording must not hang behind a long run; the default is 30 s)."""
    token = _busy_ms.set(ms)
    try:
        yield
    finally:
        _busy_ms.reset(token)


_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_LOCKED = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_KINDS = {
    8: "is read-only",  # SQLITE_READONLY
    13: "cannot be written: the disk is full",  # SQLITE_FULL
    10: "failed with an I/O error",  # SQLITE_IOERR
    14: "cannot be opened",  # SQLITE_CANTOPEN
    3: "cannot be accessed (permission denied)",  # SQLITE_PERM
    23: "cannot be accessed (permission denied)",  # SQLITE_AUTH
}
#: Files checked in this process: (path, device, inode) -> (the state checked, when).
_checked: dict[tuple[str, int, int], tuple[tuple[str, int, int, int, int], float]] = {}
#: A file this process checked is trusted for this long after it changed on disk: the process's
#: own writes (a checkpoint when a connection closes) change its size and mtime, and one
#: ``memory status`` would otherwise check a large database four times. A corrupt page met
#: meanwhile still marks it for the next open (mark_suspect).
RECHECK_AFTER_S = 60.0
_defer: ContextVar[bool] = ContextVar("memcore_db_defer_check", default=False)

_QUARANTINE_SCHEMA = """CREATE TABLE IF NOT EXISTS db_quarantines (
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, aside TEXT NOT NULL, reason TEXT NOT NULL,
    recovered TEXT NOT NULL, lost TEXT NOT NULL)"""


def is_corrupt(exc: BaseException) -> bool:
    """Whether a SQLite error means the file itself is damaged."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _CORRUPT
    msg = str(exc).lower()
    return "malformed" in msg or "not a database" in msg


def translate(exc: sqlite3.Error, path: Path | str) -> DatabaseError:
    """The one-line error a user sees for a SQLite failure on ``path``."""
    code = getattr(exc, "sqlite_errorcode", None)
    base = code & 0xFF if isinstance(code, int) else None
    msg = str(exc)
    if base in _LOCKED or "locked" in msg.lower():
        return DatabaseLocked(f"database {path} is locked by another process; try again later")
    if is_corrupt(exc):
        mark_suspect(path)
        return DatabaseError(
            f"database {path} is corrupt ({msg}); the next command sets it aside and recovers "
            "what it can"
        )
    what = _KINDS.get(base or -1)
    if what is None:
        low = msg.lower()
        if "readonly" in low or "read-only" in low:
            what = "is read-only"
        elif "full" in low:
            what = "cannot be written: the disk is full"
        else:
            what = f"failed: {msg}"
    return DatabaseError(f"database {path} {what}")


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open; never mask the error being handled (SQLite
    rolls back by itself on a full disk, and a second ROLLBACK would raise)."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def connect(path: Path | str) -> sqlite3.Connection:
    """Open (and create) the database with WAL and a busy timeout.

    A corrupt file is set aside and its tables salvaged (see the module docstring); any other
    failure raises DatabaseError (DatabaseLocked when another process holds it)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(
            f"database {path} cannot be created: {exc.strerror or exc} ({path.parent})"
        ) from None
    try:
        return _open_checked(path)
    except sqlite3.Error as exc:
        if not is_corrupt(exc):
            raise translate(exc, path) from None
        return _quarantine(path, str(exc))


def _open(path: Path) -> sqlite3.Connection:
    ms = _busy_ms.get()
    conn = sqlite3.connect(
        str(path), timeout=ms / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(ms)}")
        _ensure_wal(conn, ms / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Touch the schema so a file that is not a database fails here, not later.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_wal(conn: sqlite3.Connection, patience: float) -> None:
    """Switch a new database to WAL. Switching needs the file to itself, and SQLite answers
    "database is locked" at once (its busy timeout does not apply) when another connection
    opens the same new file meanwhile: try again until the switch is made, by this connection
    or another one, or ``patience`` seconds have passed."""
    deadline = time.monotonic() + patience
    while True:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() == "wal":
            return
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def _identity(path: Path) -> tuple[str, int, int, int, int] | None:
    """(path, device, inode, size, mtime) from stat. Never open the file to read it: closing
    any descriptor of a database file drops every POSIX lock SQLite holds on it in this
    process, and that corrupts WAL databases under concurrency."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _stamp(ident: tuple[str, int, int, int, int]) -> str:
    return " ".join(map(str, ident[1:]))


def _stamped(path: Path, ident: tuple[str, int, int, int, int]) -> bool:
    try:
        return _stamp_path(path).read_text(encoding="ascii").strip() == _stamp(ident)
    except (OSError, UnicodeDecodeError):
        return False


@contextlib.contextmanager
def check_deferred() -> Iterator[None]:
    """Connections opened inside skip ``PRAGMA quick_check`` on a file not checked yet (the
    hot paths: a search, a recording's fold); a corrupt page they meet still surfaces as an
    error, which marks the file for the next check (see translate)."""
    token = _defer.set(True)
    try:
        yield
    finally:
        _defer.reset(token)


def mark_suspect(path: Path | str) -> None:
    """Forget that ``path`` passed its check (a query met a corrupt page): the next open runs
    ``PRAGMA quick_check`` again and sets the file aside if it fails."""
    path = Path(path)
    for key in [k for k in _checked if k[0] == str(path)]:
        del _checked[key]
    with contextlib.suppress(OSError):
        _stamp_path(path).unlink()


def _open_checked(path: Path) -> sqlite3.Connection:
    """_open plus ``PRAGMA quick_check`` whenever the file changed on disk since its last
    check (size, mtime, inode: recorded in ``<name>.checked``, so an unchanged file is checked
    once, not by every process; in one process at most once a minute, see RECHECK_AFTER_S) and
    after mark_suspect. Raises sqlite3.DatabaseError when it is corrupt."""
    conn = _open(path)
    ident = _identity(path)
    if ident is None or _defer.get():
        return conn
    seen = _checked.get(ident[:3])
    if seen is not None and (seen[0] == ident or time.monotonic() - seen[1] < RECHECK_AFTER_S):
        return conn
    if _stamped(path, ident):
        _checked[ident[:3]] = (ident, time.monotonic())
        return conn
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
    except BaseException:
        conn.close()
        raise
    if rows != ["ok"]:
        conn.close()
        err = sqlite3.DatabaseError("quick_check: " + "; ".join(map(str, rows))[:300])
        err.sqlite_errorcode = 11
        raise err
    _checked[ident[:3]] = (ident, time.monotonic())
    with contextlib.suppress(OSError):  # best effort: a read-only folder checks every time
        _stamp_path(path).write_text(_stamp(ident) + "\n", encoding="ascii")
    return conn


# -- quarantine ---------------------------------------------------------------------------


def _quarantine(path: Path, reason: str) -> sqlite3.Connection:
    from filelock import FileLock, Timeout

    lock = FileLock(str(path.with_name(path.name + ".quarantine.lock")))
    try:
        lock.acquire(timeout=60)
    except Timeout:
        raise DatabaseLocked(f"database {path} is being recovered by another process") from None
    try:
        try:  # another process may have set it aside while we waited
            return _open_checked(path)
        except sqlite3.Error as exc:
            if not is_corrupt(exc):
                raise translate(exc, path) from None
        aside = _link_aside(path)
        with contextlib.suppress(FileNotFoundError):
            os.link(path.with_name(path.name + "-wal"), aside.with_name(aside.name + "-wal"))
        # The recovered database is built under a name of its own and renamed over the corrupt
        # one when complete: another process opening ``path`` meanwhile finds the corrupt file
        # (and waits on the quarantine lock), never a missing or half-salvaged one.
        for stale in path.parent.glob(f"{glob_escape(path.name)}.recovering-*"):
            with contextlib.suppress(FileNotFoundError):  # a recovery killed midway
                os.unlink(stale)
        fresh = path.with_name(f"{path.name}.recovering-{os.getpid()}")
        try:
            conn = _open(fresh)
        except sqlite3.Error as exc:
            raise translate(exc, fresh) from None
        try:
            recovered, lost = salvage(aside, conn)
            _note(conn, aside, reason, recovered, lost)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        _remove_companions(path)
        os.replace(fresh, path)
        _remove_companions(fresh)
        try:
            conn = _open(path)
        except sqlite3.Error as exc:
            raise translate(exc, path) from None
        log.warning(
            "database %s was corrupt (%s); set aside as %s. Recovered: %s. Lost: %s. %s",
            path,
            reason,
            aside.name,
            _summary(recovered) or "nothing",
            "; ".join(f"{t} ({why})" for t, why in lost.items()) or "nothing",
            restore_hint(path, aside),
        )
        return conn
    except OSError as exc:
        raise DatabaseError(f"database {path} is corrupt and cannot be set aside: {exc}") from None
    finally:
        lock.release()


def _remove_companions(path: Path) -> None:
    """Remove a database file's ``-wal`` / ``-shm`` companions, if present."""
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.with_name(path.name + suffix))


def restore_hint(path: Path | str, aside: Path | str) -> str:
    """How to go back to a file that was set aside (after repairing it, for instance)."""
    return (
        f"The old file is kept as {aside}; to restore it, stop memcore (and the gateway),"
        f" then copy it over {path} and delete {Path(str(path) + '.checked')}"
    )


def _link_aside(path: Path) -> Path:
    """Hard-link ``path`` to a name no other process can take (link fails on an existing
    name), so two quarantines never share one."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1000):
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{os.getpid()}-{n}")
        try:
            os.link(path, aside)
        except FileExistsError:
            continue
        return aside
    raise OSError(f"no free quarantine name next to {path}")


def _summary(recovered: dict[str, int]) -> str:
    return ", ".join(f"{t} ({n} rows)" for t, n in recovered.items())


def _is_cache(name: str, sql: str) -> bool:
    return name.startswith(CACHE_PREFIXES) or sql.upper().startswith("CREATE VIRTUAL")


def salvage(old_path: Path, new: sqlite3.Connection) -> tuple[dict[str, int], dict[str, str]]:
    """Copy every table of ``old_path`` that is not a cache into ``new``: ``({table: rows
    copied}, {table: what was lost})``. Unreadable rows are skipped, not fatal."""
    recovered: dict[str, int] = {}
    lost: dict[str, str] = {}
    try:
        old = sqlite3.connect(f"file:{old_path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return recovered, {"*": f"cannot open the old file: {exc}"}
    try:
        try:
            schema = old.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
            ).fetchall()
        except sqlite3.Error as exc:
            return recovered, {"*": f"the schema is unreadable: {exc}"}
        tables = [(n, s) for t, n, s in schema if t == "table" and not _is_cache(n, s)]
        new.execute("PRAGMA foreign_keys = OFF")
        for name, sql in tables:
            try:
                new.execute(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
                copied, error = _copy_rows(old, new, name)
            except sqlite3.Error as exc:
                lost[name] = f"cannot be copied: {exc}"
                continue
            recovered[name] = copied
            if error:
                lost[name] = error
        for t, name, sql in schema:
            if t == "index" and not _is_cache(name, sql):
                with contextlib.suppress(sqlite3.Error):
                    new.execute(sql.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
    finally:
        old.close()
        new.execute("PRAGMA foreign_keys = ON")
    return recovered, lost


def _copy_rows(old: sqlite3.Connection, new: sqlite3.Connection, name: str) -> tuple[int, str]:
    """Copy rows in rowid order, stepping over unreadable stretches; (rows copied, loss)."""
    q = '"' + name.replace('"', '""') + '"'
    cols = [r[1] for r in old.execute(f"PRAGMA table_info({q})")]
    marks = ",".join("?" * len(cols))
    insert = f"INSERT OR IGNORE INTO {q} VALUES ({marks})"
    try:
        old.execute(f"SELECT rowid FROM {q} LIMIT 1").fetchall()
        has_rowid = True
    except sqlite3.Error:
        has_rowid = False
    copied = 0
    if not has_rowid:
        try:
            rows = old.execute(f"SELECT * FROM {q}").fetchall()
        except sqlite3.Error as exc:
            return 0, f"unreadable: {exc}"
        new.execute("BEGIN")
        new.executemany(insert, rows)
        new.execute("COMMIT")
        return len(rows), ""
    last = None
    skipped = 0
    step = 1
    new.execute("BEGIN")
    try:
        while True:
            where = "" if last is None else f" WHERE rowid > {last}"
            try:
                cur = old.execute(f"SELECT rowid, * FROM {q}{where} ORDER BY rowid")
                for row in cur:
                    new.execute(insert, row[1:])
                    copied += 1
                    last = row[0]
                    step = 1
                break
            except sqlite3.Error:
                skipped += 1
                if skipped > 64:
                    break
                last = (last or 0) + step  # jump past the bad stretch and try again
                step *= 4
        new.execute("COMMIT")
    except BaseException:
        rollback_quietly(new)
        raise
    return copied, (f"rows after rowid {last} partly unreadable" if skipped else "")


def _note(
    conn: sqlite3.Connection, aside: Path, reason: str, recovered: dict[str, int], lost: Any
) -> None:
    import json

    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(sqlite3.Error):
        conn.execute(_QUARANTINE_SCHEMA)
        conn.execute(
            "INSERT INTO db_quarantines (at, aside, reason, recovered, lost) VALUES (?,?,?,?,?)",
            (at, str(aside), reason, json.dumps(recovered), json.dumps(lost)),
        )


def quarantines(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Past quarantines of this database, oldest first (for ``memory status``)."""
    import json

    try:
        rows = conn.execute(
            "SELECT at, aside, reason, recovered, lost FROM db_quarantines ORDER BY id"
        ).fetchall()
    except sqlite3.Error:
        return []
    return [
        {
            "at": r[0],
            "aside": r[1],
            "reason": r[2],
            "recovered": json.loads(r[3]),
            "lost": json.loads(r[4]),
        }
        for r in rows
    ]
