"""Entries the cap took from the recall store, kept so nothing is lost.

Every time the cap drops entries (a record at the cap, a store another tool wrote over
``max_entries``, a lowered cap), the dropped entries go to
``memory/.dreams/evicted-<UTC>.json.gz`` (``{"version": 1, "evictedAt", "maxEntries",
"runId", "entries": {...}}``, gzip), written as a journaled run of kind ``evict``
(:func:`journal_eviction`), so ``memcore undo RUN`` puts them back (and ``memcore history``
lists them). ``memory status`` lists these files; ``memory status --fix`` puts the entries of
all of them back, raising ``[dreaming] max_entries`` in memcore.toml when the store would
otherwise exceed it.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import StoreError
from memcore.workspace import db
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace

PREFIX = "evicted-"
SUFFIX = ".json.gz"
#: The journal's kind for a run that set entries aside.
RUN_KIND = "evict"


def _sidecar_bytes(
    entries: dict[str, Any], now: datetime, max_entries: int | None, run_id: str | None
) -> bytes:
    doc = {
        "version": 1,
        "evictedAt": iso_ms(now),
        "maxEntries": max_entries,
        "runId": run_id,
        "entries": entries,
    }
    return gzip.compress(orjson.dumps(doc), compresslevel=6, mtime=0)


def _stamp(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"


def _create(path: Path, data: bytes) -> None:
    """Create the new file ``path`` holding ``data``, fsynced. No temp file and no folder sync:
    a half-written sidecar is deleted here, and the store written next to it right after syncs
    the folder for both names."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        raise
    os.close(fd)


def journal_eviction(
    ws: Workspace,
    entries: dict[str, Any],
    now: datetime,
    max_entries: int | None,
    *,
    reason: str = "over max_entries",
    conn: sqlite3.Connection | None = None,
) -> tuple[str, Path]:
    """Set ``entries`` (raw, as the store held them) aside as one journaled run: a new
    sidecar, then the run (kind ``evict``, the sidecar's after-image, one change per key) in one
    transaction. Returns (run id, sidecar path). Call with the workspace lock held, before the
    store without them is written: a crash in between leaves them in both places, which undo
    and ``--fix`` both tolerate; a crash before the run leaves a sidecar ``--fix`` restores.

    The sidecar is a new file, so the run needs no preimage and no pending marker: undoing it
    deletes the sidecar when it is still what the run wrote (the journal's file check) and puts
    its entries back. That keeps a record at the cap cheap."""
    from memcore.journal import runs
    from memcore.journal.runs import Change
    from memcore.journal.wal import rel_path, sha1_of

    ws.ensure_dreams_dir()
    stamp = _stamp(now)
    path = next(
        (
            p
            for n in range(1000)
            if not (
                p := ws.dreams_dir / f"{PREFIX}{stamp}{'' if n == 0 else f'-{n}'}{SUFFIX}"
            ).exists()
        ),
        None,
    )
    if path is None:
        raise StoreError(f"no free name for an evicted-entries file in {ws.dreams_dir}")
    run_id = runs.new_run_id(now)
    data = _sidecar_bytes(entries, now, max_entries, run_id)
    _create(path, data)
    own = conn is None
    if conn is None:
        conn = db.connect(ws.db_path)
    try:
        runs.ensure_schema(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT INTO journal_files (run_id, path, before_sha1, after_sha1)"
                " VALUES (?, ?, NULL, ?)",
                (run_id, rel_path(ws, path), sha1_of(data)),
            )
            runs.insert_run(
                conn,
                run_id=run_id,
                kind=RUN_KIND,
                mode="auto",
                trigger="command",
                started=now,
                status="applied",
                counters={"evicted": len(entries), "maxEntries": max_entries},
                before_sha1=None,
                after_sha1=None,
                changes=[Change("cap", "evict", key, reason) for key in entries],
            )
            conn.execute(
                "UPDATE dream_runs SET finished_at = ? WHERE run_id = ?", (iso_ms(now), run_id)
            )
            conn.execute("COMMIT")
        except BaseException:
            db.rollback_quietly(conn)
            raise
    finally:
        if own:
            conn.close()
    return run_id, path


def sidecars(ws: Workspace) -> list[Path]:
    """Evicted-entries files, oldest first."""
    if not ws.dreams_dir.is_dir():
        return []
    return sorted(ws.dreams_dir.glob(PREFIX + "*" + SUFFIX))


def load(path: Path) -> dict[str, Any]:
    """The entries of one sidecar (StoreError when it cannot be read)."""
    try:
        doc = orjson.loads(gzip.decompress(path.read_bytes()))
    except (OSError, EOFError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"cannot read evicted entries {path}: {exc}") from None
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        raise StoreError(f"{path} does not hold evicted entries")
    return entries


def summary(ws: Workspace) -> list[dict[str, Any]]:
    """``[{path, entries}]`` for ``memory status`` (entries None when unreadable)."""
    out: list[dict[str, Any]] = []
    for p in sidecars(ws):
        try:
            n: int | None = len(load(p))
        except StoreError:
            n = None
        out.append({"path": str(p), "entries": n})
    return out


@dataclass
class RestoreResult:
    restored: int = 0
    already: int = 0  # keys the store holds again (recorded since): the live entry wins
    files: list[str] = field(default_factory=list)
    cap_raised_to: int | None = None


def restore(ws: Workspace, now: datetime, *, lock_timeout: float | None = None) -> RestoreResult:
    """Put every evicted entry back into the store (under the lock) and delete the sidecars.

    When the store would exceed ``max_entries``, ``[dreaming] max_entries`` in memcore.toml is
    raised to fit (the result says to what), since a cap below the store's size would evict
    the same entries again."""
    from memcore.recall.store import fold_logged, read_store, write_store
    from memcore.workspace.config import dreaming_settings, load_config, set_value

    out = RestoreResult()
    with ws.lock(lock_timeout):
        files = sidecars(ws)
        if not files:
            return out
        fold_logged(ws, now)
        store = read_store(ws, now=now, normalize=False)
        changed: list[str] = []
        for p in files:
            for key, entry in load(p).items():
                if key in store.entries:
                    out.already += 1
                    continue
                store.entries[key] = entry
                changed.append(key)
        cap = dreaming_settings(load_config(ws)).max_entries
        if len(store.entries) > cap:
            out.cap_raised_to = len(store.entries)
            set_value(ws, "dreaming", "max_entries", out.cap_raised_to)
        write_store(ws, store, now, changed=None)
        for p in files:
            p.unlink()
            out.files.append(str(p))
        out.restored = len(changed)
    return out
