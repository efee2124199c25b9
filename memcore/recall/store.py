"""The recall store ``memory/.dreams/short-term-recall.json``.

Format and update rules are OpenClaw's, so either tool reads what the other wrote. memcore adds
bounds (snippet length, entry cap) and never fails for good on a bad file: a store that does not
parse is moved aside by a writing command (a preview only reports it) and a fresh one started.

Recording never waits for the workspace lock: a search's hits go to the recall log
(:mod:`memcore.recall.log`) and whoever holds the lock next folds the log into this file
(:func:`fold_pending`). Readers that may not write see the pending lines on top
(:func:`read_view`, :func:`fresh_mirror` with ``read_only``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import InputError, LockBusy, MemcoreError, StoreCorrupt, StoreError
from memcore.recall import blocks
from memcore.recall import log as recall_log
from memcore.recall import mirror as recall_index
from memcore.recall.entries import (
    ORIGINS,
    apply_hashed,
    coerce_count,
    is_promoted,
    js_numbers,
    normalize_entry,
    parse_hits,
    query_hash,
)
from memcore.recall.mirror import Stat
from memcore.workspace import db
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.core import Workspace, atomic_write_bytes, read_regular_bytes
from memcore.workspace.gcpause import no_gc as _no_gc

log = logging.getLogger(__name__)

MAX_STORE_BYTES = 256 * 1024 * 1024  # beyond this a store is "absurdly large" and set aside
FOLD_BUSY_MS = 2000  # a recording's fold waits this long for a busy mirror, then skips it


@dataclass
class Store:
    """The whole recall store held in memory."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    updated_at: str | None = None
    invalid: int = 0  # entries dropped by normalisation on read
    quarantined: Path | None = None  # where a corrupt file was moved this read

    def to_json_bytes(self) -> bytes:
        """The file as OpenClaw writes it: 2-space JSON, a trailing newline, and numbers in
        JavaScript's form (an integral score is ``1``, not ``1.0``), so a store both tools
        write stays byte-identical."""
        entries = {k: js_numbers(v) for k, v in self.entries.items()}
        doc = {"version": 1, "updatedAt": self.updated_at, "entries": entries}
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


def _load_raw(
    path: Path, now: datetime, set_aside: bool = True
) -> tuple[dict[str, Any] | None, Path | None]:
    """Parse the file; quarantine what cannot be used (or, without ``set_aside``, raise
    StoreCorrupt and leave it). Returns (document or None, quarantined)."""
    data, aside = _read_bytes(path, now, set_aside)
    if data is None:
        return None, aside
    return _parse(path, data, now, set_aside)


def _bad(path: Path, now: datetime, set_aside: bool, reason: str) -> tuple[None, Path]:
    if not set_aside:
        raise StoreCorrupt(
            f"recall store {path} {reason}; left as it is (memcore memory status --fix "
            "or the next recording sets it aside)"
        )
    return None, quarantine(path, now, reason)


def _read_bytes(path: Path, now: datetime, set_aside: bool) -> tuple[bytes | None, Path | None]:
    """The file's bytes (None: missing or blank), with the size limit of _load_raw."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise StoreError(f"cannot read recall store {path}: {exc.strerror}") from None
    if size > MAX_STORE_BYTES:
        return _bad(path, now, set_aside, f"is {size} bytes (limit {MAX_STORE_BYTES})")
    try:
        data = read_regular_bytes(path, MAX_STORE_BYTES)
    except FileNotFoundError:
        return None, None
    except (OSError, MemcoreError) as exc:
        raise StoreError(f"cannot read recall store {path}: {exc}") from None
    if not data or data.isspace():
        return None, None
    return data, None


def _parse(
    path: Path, data: bytes, now: datetime, set_aside: bool
) -> tuple[dict[str, Any] | None, Path | None]:
    try:
        with _no_gc():
            doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return _bad(path, now, set_aside, f"is not valid JSON ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("entries", {}), dict):
        return _bad(path, now, set_aside, "does not have the shape {version, updatedAt, entries}")
    return doc, None


def read_store(
    ws: Workspace,
    *,
    now: datetime | None = None,
    normalize: bool = True,
    set_aside: bool = True,
) -> Store:
    """Read the store. Missing or empty gives an empty store; a corrupt one is quarantined
    (without ``set_aside``, for previews: StoreCorrupt is raised and the file left alone).

    With ``normalize`` every entry goes through OpenClaw's read rules (invalid ones dropped).
    When the file is absent, OpenClaw's SQLite-held state is read instead, read-only
    (:mod:`memcore.recall.openclaw_state`).
    """
    now = now or utcnow()
    doc, aside = _load_raw(ws.store_path, now, set_aside)
    if doc is None and aside is None and not ws.store_path.exists():
        from memcore.recall import openclaw_state

        found = openclaw_state.load(ws)  # OpenClaw's SQLite state, read-only
        if found is not None:
            doc = found[0]
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
    before_replace: Callable[[str], None] | None = None,
) -> None:
    """Stamp ``updatedAt``, write the store atomically (pretty JSON, trailing newline) and
    bring the SQLite mirror along. Call with the lock held; ``before`` is the file's stat when
    it was read, ``changed``/``removed`` the keys touched (None: everything). With
    ``complete=False`` a mirror that was already stale is only marked stale (the next reader
    rebuilds it) instead of being rebuilt inside the lock."""
    ws.ensure_dreams_dir()
    atomic_write_bytes(ws.store_path, stamped_bytes(store, now), before_replace=before_replace)
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
    folded: bool = False  # the log was folded into the store now (else: by the next run)
    notices: list[str] = field(default_factory=list)  # what the user must be told once
    fold_error: str | None = None  # the hits are in the log, but the store cannot take them


def record_recalls(
    ws: Workspace,
    query: str,
    results: Iterable[Any],
    *,
    now: datetime | None = None,
    max_entries: int | None = None,
    protect: Callable[[dict[str, Any]], bool] | None = None,
    lock_timeout: float | None = 0.0,
    origin: str = "interactive",
) -> RecordResult:
    """Record one search call's eligible hits: append them to the recall log (no lock), then
    fold the log into the store if the lock is free within ``lock_timeout`` seconds (default:
    only if it is free now). A busy lock loses nothing: the next lock holder folds.

    ``protect`` marks entries the cap must never drop (unpromoted entries passing the gates);
    ``origin`` says what issued the search (see entries.ORIGINS). Raises InputError for bad
    results and StoreError when the log cannot be written.
    """
    now = now or utcnow()
    event = recall_event(ws, query, results, now=now, origin=origin)
    if event is None:
        return RecordResult(0, [])
    return record_events(
        ws, [event], now=now, max_entries=max_entries, protect=protect, lock_timeout=lock_timeout
    )


def recall_event(
    ws: Workspace, query: str, results: Iterable[Any], *, now: datetime, origin: str
) -> recall_log.Event | None:
    """One search call's eligible hits as a recall-log event, validated but not written (None
    when nothing is eligible). Raises InputError for bad results or an unknown ``origin``."""
    if origin not in ORIGINS:
        raise InputError(f"origin {origin!r} is not allowed; allowed: {', '.join(ORIGINS)}")
    if not query.strip():
        return None
    hits = parse_hits(ws, results)
    if not hits:
        return None
    return recall_log.Event(iso_ms(now), query_hash(query), origin, tuple(hits))


def record_events(
    ws: Workspace,
    events: list[recall_log.Event],
    *,
    now: datetime,
    max_entries: int | None = None,
    protect: Callable[[dict[str, Any]], bool] | None = None,
    lock_timeout: float | None = 0.0,
) -> RecordResult:
    """Record search calls' events (see :func:`recall_event`): one append to the recall log
    for all of them, then one fold into the store if the lock is free within
    ``lock_timeout`` seconds. Many events in one call is a group commit: one write and one
    store rewrite for a whole batch of searches. Raises StoreError when the log cannot be
    written (nothing of the batch was recorded then)."""
    if not events:
        return RecordResult(0, [])
    recall_log.append_events(ws, events)
    keys = [h.key for ev in events for h in ev.hits]
    out = RecordResult(len(keys), keys)
    try:
        with ws.lock(lock_timeout or 0.0), db.busy_timeout(FOLD_BUSY_MS), db.check_deferred():
            fold = fold_pending(ws, now, max_entries=max_entries, protect=protect)
    except LockBusy:
        return out  # safe in the log: the lock holder (or the next one) folds it
    except (MemcoreError, OSError, sqlite3.Error) as exc:
        out.fold_error = f"the hits wait in the recall log; folding them into the store: {exc}"
        return out
    out.folded = True
    out.dropped, out.quarantined = fold.dropped, fold.quarantined
    out.notices.extend(fold.notices)
    if fold.full:
        # The full path ran because the mirror did not match the file (another tool wrote
        # it, or it never existed). Rebuild it now, outside the lock, so the next fold takes
        # the patching path again instead of paying a full read every time.
        try:
            fresh_mirror(ws, now).close()
        except (sqlite3.Error, OSError, MemcoreError) as exc:
            log.warning("could not rebuild the recall index in %s: %s", ws.db_path, exc)
    return out


@dataclass
class FoldResult:
    events: int = 0
    dropped: int = 0
    quarantined: Path | None = None
    evicted: Path | None = None  # sidecar holding the entries the cap dropped
    evict_run: str | None = None  # the journal run that set them aside (memcore undo RUN)
    full: bool = False  # the whole store was parsed (not the patching path)
    file_scans: int = 0  # end-to-end searches of the store file by the patching path
    notices: list[str] = field(default_factory=list)


def fold_pending(
    ws: Workspace,
    now: datetime,
    *,
    max_entries: int | None = None,
    protect: Callable[[dict[str, Any]], bool] | None = None,
) -> FoldResult:
    """Fold every pending recall-log line into the store, in order. Call with the workspace
    lock held. Without ``max_entries``/``protect`` they come from memcore.toml (no cap when it
    is invalid). Crash-safe: see memcore.recall.log."""
    recall_log.recover(ws)
    segs = recall_log.claim(ws)
    if not segs:
        return FoldResult()
    events = recall_log.read_events(segs)
    if max_entries is None:
        max_entries, protect = _cap_from_config(ws, now)
    out = FoldResult(events=len(events))
    with recall_log.fold_intent(ws, segs) as before_replace:
        if not events:
            return out  # only torn or foreign lines: the segments just go
        try:
            conn: sqlite3.Connection | None = recall_index.connect(ws)
        except (sqlite3.Error, OSError, MemcoreError):
            conn = None  # the mirror rebuilds itself on the next read
        try:
            return _fold_with(ws, conn, events, now, max_entries, protect, before_replace, out)
        finally:
            if conn is not None:
                conn.close()


def _fold_with(
    ws: Workspace,
    conn: sqlite3.Connection | None,
    events: list[recall_log.Event],
    now: datetime,
    max_entries: int | None,
    protect: Callable[[dict[str, Any]], bool] | None,
    before_replace: Callable[[str], None],
    out: FoldResult,
) -> FoldResult:
    """The fold itself, on one mirror connection (None: the full path, mirror marked stale)."""
    if conn is not None:
        _heal_mirror(ws, conn, now, out)
    before = recall_index.file_stat(ws)
    if conn is not None and _fold_fast(
        ws, conn, before, events, now, max_entries, protect, before_replace, out
    ):
        return out
    out.full = True
    store = read_store(ws, now=now, normalize=False)
    found = len(store.entries)
    over = max_entries is not None and found > max_entries
    keys: set[str] = set()
    for ev in events:
        apply_hashed(store.entries, ev.query_hash, ev.hits, ev.at, ev.origin)
        keys.update(h.key for h in ev.hits)
    dropped: list[str] = []
    if max_entries is not None and len(store.entries) > max_entries:
        kept = dict(store.entries)
        dropped = enforce_cap(store.entries, max_entries, protect, keep=keys)
        if dropped:
            _journal_eviction(ws, {k: kept[k] for k in dropped}, now, max_entries, out, conn)
        if over and dropped:
            out.notices.append(
                f"the recall store held {found} entries, over "
                f"max_entries = {max_entries}; {len(dropped)} were set aside in "
                f"{out.evicted} (restore: memcore memory status --fix, or "
                f"memcore undo {out.evict_run})"
            )
    write_store(
        ws,
        store,
        now,
        before=None if store.quarantined else before,
        changed=keys,
        removed=dropped,
        complete=False,
        before_replace=before_replace,
    )
    out.dropped = len(dropped)
    out.quarantined = out.quarantined or store.quarantined
    if store.quarantined:
        out.notices.append(f"the recall store did not parse; moved aside to {store.quarantined}")
    return out


def fold_logged(ws: Workspace, now: datetime) -> FoldResult | None:
    """fold_pending for writers that hold the lock for another reason (promote, undo,
    repair): failures and notices are logged, never raised (the log keeps the recalls)."""
    try:
        res = fold_pending(ws, now)
    except (MemcoreError, OSError, sqlite3.Error) as exc:
        log.warning("could not fold the recall log into %s: %s", ws.store_path, exc)
        return None
    for notice in res.notices:
        log.warning("%s", notice)
    return res


def _heal_mirror(ws: Workspace, conn: sqlite3.Connection, now: datetime, out: FoldResult) -> None:
    """When the mirror does not reflect the store file (another tool wrote it), bring it
    along by a diff of the file's blocks (:func:`_sync_from_file`), so this fold can take
    the patching path."""
    try:
        stat = recall_index.file_stat(ws)
        if stat is None or recall_index.current_meta(conn) == stat:
            return
        aside = _sync_from_file(ws, conn, now, set_aside=True, stat=stat)
        if aside is not None:
            out.quarantined = aside
            out.notices.append(f"the recall store did not parse; moved aside to {aside}")
    except sqlite3.Error as exc:
        log.warning("could not update the recall index in %s: %s", ws.db_path, exc)


def _sync_from_file(
    ws: Workspace, conn: sqlite3.Connection, now: datetime, *, set_aside: bool, stat: Stat
) -> Path | None:
    """Bring the mirror along from the store file read now, recorded as the file with
    ``stat`` (None: to be checked again by the next reader) unless the file changed from
    ``stat`` meanwhile. A file in the layout memcore and OpenClaw write is diffed block by
    block, parsing only the blocks that changed; any other file is parsed whole (and set
    aside when it is corrupt, as read_store does). Returns where a corrupt file went."""
    data, aside = _read_bytes(ws.store_path, now, set_aside)
    found = blocks.split(data) if data is not None else None
    if found is not None:
        with _no_gc():
            done = recall_index.sync_blocks(conn, found, _unless_moved(ws, stat), iso_ms(now))
        if done is not None:
            return None
    if data is not None:
        doc, aside = _parse(ws.store_path, data, now, set_aside)
        entries = (doc.get("entries") or {}) if doc is not None else {}
    elif aside is None:  # missing (OpenClaw's SQLite state is read then) or blank
        entries = read_store(ws, now=now, normalize=False, set_aside=set_aside).entries
    if aside is None:
        recall_index.sync_raw(conn, entries, _unless_moved(ws, stat), iso_ms(now))
    return aside


def _unless_moved(ws: Workspace, stat: Stat) -> Stat:
    return stat if stat is not None and recall_index.file_stat(ws) == stat else None


def _journal_eviction(
    ws: Workspace,
    entries: dict[str, Any],
    now: datetime,
    max_entries: int,
    out: FoldResult,
    conn: sqlite3.Connection | None = None,
) -> None:
    from memcore.recall.evicted import journal_eviction

    out.evict_run, out.evicted = journal_eviction(ws, entries, now, max_entries, conn=conn)


def _cap_from_config(
    ws: Workspace, now: datetime
) -> tuple[int | None, Callable[[dict[str, Any]], bool] | None]:
    from memcore.errors import ConfigError
    from memcore.recall.scoring import cap_protection
    from memcore.workspace.config import dreaming_settings, load_config

    try:
        s = dreaming_settings(load_config(ws))
    except ConfigError:
        return None, None
    return s.max_entries, cap_protection(s, now)


def _fold_fast(
    ws: Workspace,
    conn: sqlite3.Connection,
    before: Stat,
    events: list[recall_log.Event],
    now: datetime,
    max_entries: int | None,
    protect: Callable[[dict[str, Any]], bool] | None,
    before_replace: Callable[[str], None],
    out: FoldResult,
) -> bool:
    """The patching path of recall.patch, with the mirror brought along; False to fall back."""
    from memcore.recall import patch as recall_patch

    try:
        done = recall_patch.try_record(
            ws,
            conn,
            before,
            events,
            now,
            max_entries,
            protect,
            before_replace,
            on_evict=lambda ev: _journal_eviction(ws, ev, now, max_entries or 0, out, conn),
        )
    except (sqlite3.Error, orjson.JSONDecodeError, ValueError):
        return False
    if done is None:
        return False
    dropped = list(done.dropped)
    out.dropped, out.file_scans = len(dropped), done.file_scans
    try:
        recall_index.update_after_write(
            ws,
            done.entries,
            before=before,
            now_iso=iso_ms(now),
            changed=list(done.entries),
            removed=dropped,
            complete=False,
            conn=conn,
        )
    except (sqlite3.Error, OSError) as exc:
        log.warning("could not update the recall index in %s: %s", ws.db_path, exc)
    finally:
        conn.close()
    return True


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
        if isinstance(promoted, str) and promoted:
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
        if protect is not None and isinstance(e, dict) and not is_promoted(e) and protect(e):
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


def fresh_mirror(ws: Workspace, now: datetime, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection whose mirror reflects the store file on disk (rebuilt if it does not).

    With ``read_only`` (previews) nothing of the user's is moved or created: a corrupt store
    raises StoreCorrupt, and when ``memcore.sqlite`` does not exist, cannot be opened, or
    recall-log lines are waiting to be folded, the mirror is built in memory (the pending
    lines applied on top)."""
    if read_only:
        events = recall_log.pending_events(ws)
        if events or not ws.db_path.exists():
            return _memory_mirror(ws, now, events)
        try:
            conn = recall_index.connect(ws)
        except (sqlite3.Error, OSError, MemcoreError):
            return _memory_mirror(ws, now, events)
    else:
        conn = recall_index.connect(ws)
    try:
        _refresh(ws, conn, now, set_aside=not read_only)
    except BaseException:
        conn.close()
        raise
    return conn


def _refresh(ws: Workspace, conn: sqlite3.Connection, now: datetime, set_aside: bool) -> None:
    stat = recall_index.file_stat(ws)
    if recall_index.current_meta(conn) == stat and stat is not None:
        return
    for _ in range(3):
        before = recall_index.file_stat(ws)
        _sync_from_file(ws, conn, now, set_aside=set_aside, stat=before)
        if recall_index.current_meta(conn) == before and before is not None:
            return
        if before is None and not ws.store_path.exists():
            return
    # the file kept changing: what was read stays mirrored, checked again by the next reader


def _memory_mirror(
    ws: Workspace, now: datetime, events: list[recall_log.Event]
) -> sqlite3.Connection:
    store = read_view(ws, now, events)
    conn = recall_index.memory_connect()
    recall_index.replace_all(conn, store.entries, None, store.invalid)
    return conn


def read_view(ws: Workspace, now: datetime, events: list[recall_log.Event] | None = None) -> Store:
    """The store as it will be once the pending recall-log lines are folded, normalised, read
    without writing anything (a corrupt store raises StoreCorrupt)."""
    if events is None:
        events = recall_log.pending_events(ws)
    store = read_store(ws, now=now, set_aside=False)
    if events:
        for ev in events:
            apply_hashed(store.entries, ev.query_hash, ev.hits, ev.at, ev.origin)
        now_iso = iso_ms(now)
        keys = {h.key for ev in events for h in ev.hits}
        for k in keys:
            n = normalize_entry(k, store.entries[k], now_iso)
            if n is None:
                del store.entries[k]
            else:
                store.entries[k] = n
    return store
