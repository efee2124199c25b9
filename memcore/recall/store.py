"""The recall store ``memory/.dreams/short-term-recall.json``.

Format and update rules are OpenClaw's, so either tool reads what the other
wrote. memcore adds bounds (snippet length, entry cap) and never fails for good on a bad file:
a store that does not parse is moved aside and a fresh one started.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import StoreError
from memcore.recall import mirror as recall_index
from memcore.recall.entries import (
    Hit,
    apply_hits,
    coerce_count,
    normalize_entry,
    parse_hits,
)
from memcore.recall.mirror import Stat
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.core import (
    Workspace,
    atomic_write_bytes,
)

log = logging.getLogger(__name__)

MAX_STORE_BYTES = 256 * 1024 * 1024  # beyond this a store is "absurdly large" and set aside


@dataclass
class Store:
    """The whole recall store held in memory."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    updated_at: str | None = None
    invalid: int = 0  # entries dropped by normalisation on read
    quarantined: Path | None = None  # where a corrupt file was moved this read

    def to_json_bytes(self) -> bytes:
        doc = {"version": 1, "updatedAt": self.updated_at, "entries": self.entries}
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


# -- reading ----------------------------------------------------------------------------


def quarantine(path: Path, now: datetime, reason: str) -> Path:
    """Move a bad store aside to ``<name>.corrupt-<UTC stamp>`` and return the new path."""
    stamp = now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    os.replace(path, aside)
    log.warning(
        "recall store %s %s; moved aside to %s and started a fresh store", path, reason, aside
    )
    return aside


def _load_raw(path: Path, now: datetime) -> tuple[dict[str, Any] | None, Path | None]:
    """Parse the file; quarantine what cannot be used. Returns (document or None, quarantined)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None, None
    if size > MAX_STORE_BYTES:
        return None, quarantine(path, now, f"is {size} bytes (limit {MAX_STORE_BYTES})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StoreError(f"cannot read recall store {path}: {exc.strerror}") from None
    if not data or data.isspace():
        return None, None
    try:
        with _no_gc():
            doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return None, quarantine(path, now, f"is not valid JSON ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("entries", {}), dict):
        return None, quarantine(path, now, "does not have the shape {version, updatedAt, entries}")
    return doc, None


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large acyclic structures (it would
    otherwise rescan them again and again: half the parse time of a 100k-entry store)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_store(ws: Workspace, *, now: datetime | None = None, normalize: bool = True) -> Store:
    """Read the store. Missing or empty gives an empty store; a corrupt one is quarantined.

    With ``normalize`` every entry goes through OpenClaw's read rules (invalid ones dropped).
    """
    now = now or utcnow()
    doc, aside = _load_raw(ws.store_path, now)
    if doc is None:
        return Store(quarantined=aside)
    raw_entries = doc.get("entries") or {}
    updated = doc.get("updatedAt") if isinstance(doc.get("updatedAt"), str) else None
    if not normalize:
        return Store(entries=raw_entries, updated_at=updated)
    now_iso = iso_ms(now)
    entries: dict[str, dict[str, Any]] = {}
    invalid = 0
    with _no_gc():
        for key, raw in raw_entries.items():
            entry = normalize_entry(key, raw, now_iso)
            if entry is None:
                invalid += 1
            else:
                entries[key] = entry
    return Store(entries=entries, updated_at=updated or now_iso, invalid=invalid)


def write_store(
    ws: Workspace,
    store: Store,
    now: datetime,
    *,
    before: Stat = None,
    changed: Iterable[str] | None = None,
    removed: Iterable[str] = (),
    complete: bool = True,
) -> None:
    """Stamp ``updatedAt``, write the store atomically (pretty JSON, trailing newline) and
    bring the SQLite mirror along. Call with the lock held; ``before`` is the file's stat when
    it was read, ``changed``/``removed`` the keys touched (None: everything). With
    ``complete=False`` a mirror that was already stale is only marked stale (the next reader
    rebuilds it) instead of being rebuilt inside the lock."""
    ws.ensure_dreams_dir()
    atomic_write_bytes(ws.store_path, stamped_bytes(store, now))
    sync_mirror(ws, store, before=before, changed=changed, removed=removed, complete=complete)


def stamped_bytes(store: Store, now: datetime) -> bytes:
    """The store's file bytes with ``updatedAt`` stamped ``now`` (for a journaled run)."""
    store.updated_at = iso_ms(now)
    return store.to_json_bytes()


def sync_mirror(
    ws: Workspace,
    store: Store,
    *,
    before: Stat = None,
    changed: Iterable[str] | None = None,
    removed: Iterable[str] = (),
    complete: bool = True,
) -> None:
    """Bring the SQLite mirror along after the store file was written (see write_store)."""
    try:
        recall_index.update_after_write(
            ws,
            store.entries,
            before=before,
            now_iso=store.updated_at or "",
            changed=changed,
            removed=removed,
            complete=complete,
        )
    except (sqlite3.Error, OSError) as exc:  # the mirror rebuilds itself on the next read
        log.warning("could not update the recall index in %s: %s", ws.db_path, exc)


# -- recording --------------------------------------------------------------------------


@dataclass
class RecordResult:
    recorded: int
    keys: list[str]
    dropped: int = 0  # entries removed by the cap
    quarantined: Path | None = None


def record_recalls(
    ws: Workspace,
    query: str,
    results: Iterable[Any],
    *,
    now: datetime | None = None,
    max_entries: int | None = None,
    protect: Callable[[dict[str, Any]], bool] | None = None,
    lock_timeout: float | None = None,
) -> RecordResult:
    """Record one search call's eligible hits under the lock (one read-modify-write).

    ``protect`` marks entries the cap must never drop (unpromoted entries passing the gates).
    """
    now = now or utcnow()
    if not query.strip():
        return RecordResult(0, [])
    hits = parse_hits(ws, results)
    if not hits:
        return RecordResult(0, [])
    with ws.lock(lock_timeout):
        # Untouched entries pass through as they are: fast, and nothing rewritten that did not
        # change. Normalisation of the whole store is `memory status --fix`'s job.
        before = recall_index.file_stat(ws)
        fast = _record_fast(ws, before, query, hits, now, max_entries, protect)
        if fast is not None:
            return fast
        store = read_store(ws, now=now, normalize=False)
        apply_hits(store.entries, query, hits, iso_ms(now))
        dropped: list[str] = []
        if max_entries is not None and len(store.entries) > max_entries:
            dropped = enforce_cap(store.entries, max_entries, protect, keep={h.key for h in hits})
        write_store(
            ws,
            store,
            now,
            before=None if store.quarantined else before,
            changed={h.key for h in hits},
            removed=dropped,
            complete=False,
        )
    # The full path ran because the mirror did not match the file (another tool wrote it, or
    # it never existed). Rebuild it now, outside the lock, so the next search takes the
    # patching path again instead of paying a full read every time.
    try:
        fresh_mirror(ws, now).close()
    except (sqlite3.Error, OSError, StoreError) as exc:
        log.warning("could not rebuild the recall index in %s: %s", ws.db_path, exc)
    return RecordResult(len(hits), [h.key for h in hits], len(dropped), store.quarantined)


def _record_fast(
    ws: Workspace,
    before: Stat,
    query: str,
    hits: list[Hit],
    now: datetime,
    max_entries: int | None,
    protect: Callable[[dict[str, Any]], bool] | None,
) -> RecordResult | None:
    """The patching path of recall_patch, with the mirror brought along; None to fall back."""
    from memcore.recall import patch as recall_patch

    try:
        conn = recall_index.connect(ws)
    except (sqlite3.Error, OSError):
        return None
    try:
        try:
            done = recall_patch.try_record(ws, conn, before, query, hits, now, max_entries, protect)
        except (sqlite3.Error, orjson.JSONDecodeError, ValueError):
            return None
        if done is None:
            return None
        entries, dropped = done
        try:
            recall_index.update_after_write(
                ws,
                entries,
                before=before,
                now_iso=iso_ms(now),
                changed=list(entries),
                removed=dropped,
                complete=False,
                conn=conn,
            )
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not update the recall index in %s: %s", ws.db_path, exc)
    finally:
        conn.close()
    return RecordResult(len(hits), [h.key for h in hits], len(dropped), None)


def enforce_cap(
    entries: dict[str, Any],
    max_entries: int,
    protect: Callable[[dict[str, Any]], bool] | None = None,
    keep: set[str] | None = None,
) -> list[str]:
    """Drop entries until at most ``max_entries`` remain; returns the dropped keys.

    Order: promoted entries (oldest promotion first), then the fewest recalls with the oldest
    last recall. Protected entries and ``keep`` keys are never dropped. Values may be raw,
    un-normalised entries (a store read with ``normalize=False``), even non-objects.
    """
    excess = len(entries) - max_entries
    if excess <= 0:
        return []
    keep = keep or set()

    def rank(item: tuple[str, Any]) -> tuple[int, str, int, str]:
        _, e = item
        promoted = e.get("promotedAt") if isinstance(e, dict) else None
        if isinstance(promoted, str):
            return (0, promoted, 0, "")
        if not isinstance(e, dict):
            return (0, "", 0, "")
        return (1, "", coerce_count(e.get("recallCount")), str(e.get("lastRecalledAt", "")))

    victims: list[str] = []
    for key, e in sorted(entries.items(), key=rank):
        if len(victims) >= excess:
            break
        if key in keep:
            continue
        if protect is not None and isinstance(e, dict) and "promotedAt" not in e and protect(e):
            continue
        victims.append(key)
    for key in victims:
        del entries[key]
    return victims


def quarantined_files(ws: Workspace) -> list[Path]:
    """Stores set aside as corrupt, oldest first."""
    if not ws.dreams_dir.is_dir():
        return []
    return sorted(ws.dreams_dir.glob(ws.store_path.name + ".corrupt-*"))


def fresh_mirror(ws: Workspace, now: datetime) -> sqlite3.Connection:
    """A connection whose mirror reflects the store file on disk (rebuilt if it does not)."""
    conn = recall_index.connect(ws)
    stat = recall_index.file_stat(ws)
    if recall_index.current_meta(conn) == stat and stat is not None:
        return conn
    for _ in range(3):
        before = recall_index.file_stat(ws)
        store = read_store(ws, now=now)
        after = recall_index.file_stat(ws)
        if before == after:
            recall_index.replace_all(conn, store.entries, after, store.invalid)
            return conn
    recall_index.replace_all(
        conn, store.entries, None
    )  # keeps rebuilding until the file holds still
    return conn
