"""Write-ahead runs: every file change memcore makes is recorded before it is made.

:func:`commit_run` is the one way a run writes MEMORY.md, daily notes, the recall store or the
archive. In this order, each step durable (SQLite ``synchronous = FULL``, files fsynced):

1. the marker ``memory/.dreams/journal.pending`` is created;
2. one transaction records the run as ``pending`` with its intent (entry-level changes) and
   the full bytes of every file it will touch, before and after (compressed, by SHA-1);
3. the files are written, each atomically (temp file, fsync, rename);
4. one transaction applies the run's database side (ledger, statuses) and marks it
   ``applied``;
5. the marker is removed.

Recovery rule: **an unfinished run is always rolled back.** The next process to take the
workspace lock (any command, the gateway at start) sees the marker and calls :func:`recover`,
which puts every file of a ``pending`` run back to its preimage (a file already back, or never
written, is left alone; a file that is neither the run's before nor its after image was
changed by someone else and is left alone too, with a warning) and marks the run
``rolled_back`` (or, when the journal has lost or cannot read a preimage, leaves that file as
the run wrote it, whole, marks the run ``interrupted`` and says so once: never a failure on
every later command). So after a kill at any point the journal describes what is on disk: the run
either happened completely (``applied``) or not at all (``rolled_back``), and ``undo`` works
on everything ``applied``. An error inside the run (a full disk, a read-only folder) rolls it
back the same way before it is raised.

The images of the last ``[journal] keep_versions`` runs (default 20) and the last
``keep_versions`` versions of MEMORY.md are kept; older images are pruned (undo of an older
run then reverses its entry-level changes instead of restoring bytes).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.errors import MemcoreError, WorkspaceError
from memcore.journal import runs
from memcore.journal.runs import Change
from memcore.workspace import db
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.config import get_number, load_config
from memcore.workspace.core import Workspace, atomic_write_bytes

log = logging.getLogger(__name__)

DEFAULT_KEEP_VERSIONS = 20
MEMORY_MD = "MEMORY.md"


def keep_versions(ws: Workspace) -> int:
    """``[journal] keep_versions`` (1 to 1000, default 20)."""
    value = get_number(
        load_config(ws),
        "journal",
        "keep_versions",
        DEFAULT_KEEP_VERSIONS,
        lo=1,
        hi=1000,
        integer=True,
    )
    return int(value)


def sha1_of(data: bytes | None) -> str | None:
    return hashlib.sha1(data).hexdigest() if data is not None else None


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when it does not exist."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise WorkspaceError(f"{path} is a directory, expected a file") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot read {path}: {exc.strerror}") from None


def rel_path(ws: Workspace, path: Path) -> str:
    """Workspace-relative POSIX path as written in the journal (absolute when outside)."""
    try:
        return path.absolute().relative_to(ws.root.absolute()).as_posix()
    except ValueError:
        return path.absolute().as_posix()


def abs_path(ws: Workspace, rel: str) -> Path:
    return ws.root / rel


def put_blob(conn: sqlite3.Connection, data: bytes) -> str:
    """Store ``data`` under its SHA-1. An image already stored is written again, so one that
    was damaged (it no longer decompresses) is repaired by the next run that has its bytes."""
    sha = hashlib.sha1(data).hexdigest()
    conn.execute(
        "INSERT INTO journal_blobs (sha1, size, data) VALUES (?, ?, ?)"
        " ON CONFLICT (sha1) DO UPDATE SET size = excluded.size, data = excluded.data",
        (sha, len(data), zlib.compress(data, 6)),
    )
    return sha


def get_blob(conn: sqlite3.Connection, sha: str | None) -> bytes | None:
    """The bytes stored under ``sha`` (None when ``sha`` is None or the image was pruned)."""
    if sha is None:
        return None
    row = conn.execute("SELECT data FROM journal_blobs WHERE sha1 = ?", (sha,)).fetchone()
    if row is None:
        return None
    try:
        return zlib.decompress(row[0])
    except zlib.error:
        raise WorkspaceError(
            f"the journal in {db_name(conn)} is corrupt: the image {sha[:12]} does not "
            "decompress; run memcore history to see the runs that are still whole"
        ) from None


def db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else "memcore.sqlite"


def has_blob(conn: sqlite3.Connection, sha: str | None) -> bool:
    if sha is None:
        return True
    return conn.execute("SELECT 1 FROM journal_blobs WHERE sha1 = ?", (sha,)).fetchone() is not None


@dataclass
class FileImage:
    """One file of a run: its journal path and SHA-1 before and after (None: absent)."""

    path: str
    before_sha1: str | None
    after_sha1: str | None


def file_images(conn: sqlite3.Connection, run_id: str) -> list[FileImage]:
    return [
        FileImage(r[0], r[1], r[2])
        for r in conn.execute(
            "SELECT path, before_sha1, after_sha1 FROM journal_files WHERE run_id = ?"
            " ORDER BY path",
            (run_id,),
        )
    ]


@dataclass
class RunSpec:
    """What a run is: identity, what triggered it, its counters and entry-level changes."""

    run_id: str
    kind: str
    mode: str
    now: datetime
    trigger: str = "command"
    counters: dict[str, Any] = field(default_factory=dict)
    changes: Sequence[Change] = ()
    undo_of: str | None = None


@dataclass
class _Pending:
    path: Path
    rel: str
    before: bytes | None
    after: bytes | None
    kept: Path | None = None  # a hard link to the old file, so a rollback needs no space


def commit_run(
    ws: Workspace,
    conn: sqlite3.Connection,
    spec: RunSpec,
    writes: Mapping[Path, bytes | None],
    *,
    finish: Callable[[sqlite3.Connection], None] | None = None,
) -> list[str]:
    """Run ``spec`` write-ahead (see the module docstring): ``writes`` maps each file to its
    new bytes (None: delete it); ``finish`` applies the database side inside the closing
    transaction. Call with the workspace lock held. Returns the journal paths written."""
    keep = keep_versions(ws)  # a bad config fails here, before anything is written
    todo: list[_Pending] = []
    for path, after in writes.items():
        before = read_bytes(path)
        if after != before:
            todo.append(_Pending(path, rel_path(ws, path), before, after))
    memory = next((p for p in todo if p.path == ws.memory_md), None)
    if memory is not None:
        mem_before, mem_after = sha1_of(memory.before), sha1_of(memory.after)
    else:
        mem_before = mem_after = sha1_of(read_bytes(ws.memory_md))
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    conn.execute("PRAGMA synchronous = FULL")
    try:
        if todo:
            _create_marker(ws, spec.run_id)
        with _transaction(conn):
            for p in todo:
                for data in (p.before, p.after):
                    if data is not None:
                        put_blob(conn, data)
                conn.execute(
                    "INSERT INTO journal_files (run_id, path, before_sha1, after_sha1)"
                    " VALUES (?, ?, ?, ?)",
                    (spec.run_id, p.rel, sha1_of(p.before), sha1_of(p.after)),
                )
            runs.insert_run(
                conn,
                run_id=spec.run_id,
                kind=spec.kind,
                mode=spec.mode,
                trigger=spec.trigger,
                started=spec.now,
                status="pending",
                counters=spec.counters,
                before_sha1=mem_before,
                after_sha1=mem_after,
                changes=spec.changes,
                undo_of=spec.undo_of,
            )
        try:
            for p in todo:
                if p.before is not None:
                    p.kept = _keep_old(p.path, spec.run_id)
                _write(p.path, p.after)
            with _transaction(conn):
                if finish is not None:
                    finish(conn)
                conn.execute(
                    "UPDATE dream_runs SET status = 'applied', finished_at = ? WHERE run_id = ?",
                    (iso_ms(spec.now), spec.run_id),
                )
                if memory is not None:
                    _save_versions(conn, spec, memory)
                _prune(conn, keep)
        except BaseException as exc:
            _roll_back_here(ws, conn, spec, todo)
            if isinstance(exc, OSError):
                raise WorkspaceError(
                    f"cannot write {exc.filename or 'a file'}: {exc.strerror}; "
                    f"run {spec.run_id} was rolled back, nothing changed"
                ) from None
            raise
    except BaseException:
        with contextlib.suppress(OSError, sqlite3.Error):
            conn.execute(f"PRAGMA synchronous = {int(sync)}")
        raise
    conn.execute(f"PRAGMA synchronous = {int(sync)}")
    tidy = True
    for p in todo:
        if p.kept is not None:
            try:
                os.unlink(p.kept)
            except FileNotFoundError:
                pass
            except OSError:
                tidy = False  # the marker stays: the next lock holder removes the kept file
    if todo and tidy:
        _remove_marker(ws)
    return [p.rel for p in todo]


def _keep_old(path: Path, run_id: str) -> Path | None:
    """Hard-link the file's current bytes beside it (``.<name>.<run>.prev.tmp``, which
    recovery removes like any temp file), so that rolling back a failed run is a rename that
    needs no free space and no fsync: a full disk cannot keep the old bytes from coming back.
    None where links are not possible (the rollback then writes the preimage)."""
    target = Path(os.path.realpath(path))
    link = target.with_name(f".{target.name}.{run_id}.prev.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link)
        os.link(target, link)
    except OSError:
        return None
    return link


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Any:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _write(path: Path, data: bytes | None) -> None:
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        _fsync_dir(path.parent)
    else:
        atomic_write_bytes(path, data)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _create_marker(ws: Workspace, run_id: str) -> None:
    """Create the pending-run marker in place (no temp file: its content is never needed,
    only that it exists), synced with its folder."""
    ws.ensure_dreams_dir()
    fd = os.open(ws.pending_run_path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        os.write(fd, run_id.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(ws.dreams_dir)


def _marker_run(ws: Workspace) -> str | None:
    """The run id the pending-run marker names (None when it is absent or empty)."""
    try:
        text = ws.pending_run_path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def _drop_temps(path: Path) -> None:
    """Remove the temp files an atomic write of ``path`` killed half-way left beside it
    (``.<name>.<random>.tmp``; the lock is held, so no write of ours is in flight)."""
    target = Path(os.path.realpath(path))
    prefix = f".{target.name}."
    with contextlib.suppress(OSError):
        for name in os.listdir(target.parent):
            if name.startswith(prefix) and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(target.parent / name)


def _remove_marker(ws: Workspace) -> None:
    """Best effort: a marker left behind (the folder turned read-only, an I/O error) only
    makes the next lock holder look at a run that is already settled, so failing to remove
    it must not turn a finished run into a failed command."""
    try:
        os.unlink(ws.pending_run_path)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("could not remove %s (%s); the next command will", ws.pending_run_path, e)
        return
    with contextlib.suppress(OSError):
        _fsync_dir(ws.dreams_dir)


def _roll_back_here(
    ws: Workspace, conn: sqlite3.Connection, spec: RunSpec, todo: Sequence[_Pending]
) -> None:
    """Undo a failed run in this process (best effort: when it cannot finish, the marker
    stays and the next lock holder's :func:`recover` does it). Files that cannot be put back
    are a warning; a journal that cannot record the rollback (the database is full or
    read-only, which is the error being raised) is not: the files are back, the marker stays,
    and the next lock holder marks the run rolled back."""
    try:
        for p in todo:
            if sha1_of(read_bytes(p.path)) == sha1_of(p.after):
                if p.kept is not None and sha1_of(read_bytes(p.kept)) == sha1_of(p.before):
                    os.replace(p.kept, os.path.realpath(p.path))
                    _fsync_dir(p.path.parent)
                else:
                    _write(p.path, p.before)
            _drop_temps(p.path)
    except (OSError, MemcoreError) as exc:
        log.warning("could not roll back run %s now (%s); the next run will", spec.run_id, exc)
        return
    try:
        conn.execute(
            "UPDATE dream_runs SET status = 'rolled_back', finished_at = ? WHERE run_id = ?",
            (iso_ms(spec.now), spec.run_id),
        )
    except (sqlite3.Error, MemcoreError) as exc:
        log.debug("run %s: files put back; the journal records it next time (%s)", spec.run_id, exc)
        return
    if todo:
        with contextlib.suppress(OSError):
            _remove_marker(ws)


def _save_versions(conn: sqlite3.Connection, spec: RunSpec, memory: _Pending) -> None:
    last = conn.execute("SELECT sha1 FROM memory_versions ORDER BY version DESC LIMIT 1").fetchone()
    at = iso_ms(spec.now)
    for role, data in (("before", memory.before), ("after", memory.after)):
        if data is None:
            continue
        sha = sha1_of(data)
        if last is not None and last[0] == sha:
            continue
        conn.execute(
            "INSERT INTO memory_versions (sha1, saved_at, run_id, role, size)"
            " VALUES (?, ?, ?, ?, ?)",
            (sha, at, spec.run_id, role, len(data)),
        )
        last = (sha,)


def _prune(conn: sqlite3.Connection, keep: int) -> None:
    """Keep the last ``keep`` MEMORY.md versions and the images of the last ``keep`` runs
    that wrote files (and of any pending run); drop every other image."""
    conn.execute(
        "DELETE FROM memory_versions WHERE version NOT IN"
        " (SELECT version FROM memory_versions ORDER BY version DESC LIMIT ?)",
        (keep,),
    )
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _keep_runs (run_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM _keep_runs")
    conn.execute(
        "INSERT OR IGNORE INTO _keep_runs SELECT run_id FROM dream_runs"
        " WHERE run_id IN (SELECT run_id FROM journal_files) ORDER BY rowid DESC LIMIT ?",
        (keep,),
    )
    conn.execute(
        "INSERT OR IGNORE INTO _keep_runs SELECT run_id FROM dream_runs WHERE status = 'pending'"
    )
    conn.execute(
        "DELETE FROM journal_blobs WHERE sha1 NOT IN (SELECT sha1 FROM memory_versions)"
        " AND sha1 NOT IN (SELECT before_sha1 FROM journal_files WHERE before_sha1 IS NOT NULL"
        " AND run_id IN (SELECT run_id FROM _keep_runs))"
        " AND sha1 NOT IN (SELECT after_sha1 FROM journal_files WHERE after_sha1 IS NOT NULL"
        " AND run_id IN (SELECT run_id FROM _keep_runs))"
    )


# -- recovery ---------------------------------------------------------------------------


def recover(ws: Workspace) -> list[str]:
    """Roll back every ``pending`` run (the lock is held; see the module docstring). Returns
    the ids rolled back."""
    now = utcnow()
    if not ws.db_path.exists():
        _remove_marker(ws)
        return []
    conn = db.connect(ws.db_path)
    try:
        runs.ensure_schema(conn)
        pending = [
            r[0]
            for r in conn.execute(
                "SELECT run_id FROM dream_runs WHERE status = 'pending' ORDER BY rowid DESC"
            )
        ]
        marked = _marker_run(ws)
        if marked is not None and marked not in pending:
            # killed after it was marked applied, before it tidied up: its kept old files
            for img in file_images(conn, marked):
                _drop_temps(abs_path(ws, img.path))
        for run_id in pending:
            lost: list[str] = []
            for img in file_images(conn, run_id):
                path = abs_path(ws, img.path)
                _drop_temps(path)
                current = sha1_of(read_bytes(path))
                if current == img.before_sha1:
                    continue
                if current != img.after_sha1:
                    log.warning(
                        "%s changed after run %s was interrupted; left as it is", img.path, run_id
                    )
                    continue
                try:
                    data = get_blob(conn, img.before_sha1)
                except WorkspaceError:
                    data = None  # the image does not decompress
                if data is None and img.before_sha1 is not None:
                    lost.append(img.path)
                    continue
                _write(path, data)
            status = "interrupted" if lost else "rolled_back"
            conn.execute(
                "UPDATE dream_runs SET status = ?, finished_at = ? WHERE run_id = ?",
                (status, iso_ms(now), run_id),
            )
            if lost:
                log.warning(
                    "run %s was interrupted and cannot be rolled back: the journal's preimage of"
                    " %s is lost or corrupt; left as the run wrote it (memcore history versions"
                    " lists the versions kept)",
                    run_id,
                    ", ".join(lost),
                )
            else:
                log.warning("rolled back run %s, which was interrupted before it finished", run_id)
    finally:
        conn.close()
    _remove_marker(ws)
    return pending


def image_text(conn: sqlite3.Connection, sha: str | None) -> str | None:
    """A stored image as text (None when absent or pruned)."""
    data = get_blob(conn, sha)
    return data.decode("utf-8", errors="replace") if data is not None else None


def memory_before(conn: sqlite3.Connection, run_id: str) -> str | None:
    """MEMORY.md as it was before ``run_id`` (None when unknown)."""
    row = conn.execute(
        "SELECT before_sha1 FROM journal_files WHERE run_id = ? AND path = ?", (run_id, MEMORY_MD)
    ).fetchone()
    if row is not None:
        if row[0] is None:
            return ""
        text = image_text(conn, row[0])
        if text is not None:
            return text
    run = runs.get_run(conn, run_id)
    if run is None:
        return None
    legacy = runs.before_text(run)
    if legacy is not None:
        return legacy
    return None


def versions(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """MEMORY.md versions kept, newest first."""
    return [
        {
            "version": r[0],
            "sha1": r[1],
            "savedAt": r[2],
            "runId": r[3],
            "role": r[4],
            "chars": None,
            "bytes": r[5],
        }
        for r in conn.execute(
            "SELECT version, sha1, saved_at, run_id, role, size FROM memory_versions"
            " ORDER BY version DESC"
        )
    ]


def recover_pending(ws: Workspace, lock_timeout: float | None = None) -> bool:
    """Take the lock when a run may have been interrupted, which rolls it back (the gateway
    calls this at start). True when there was something to look at."""
    if not ws.pending_run_path.exists():
        return False
    with ws.lock(lock_timeout):
        pass
    return True
