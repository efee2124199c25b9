"""The recall store ``memory/.dreams/short-term-recall.json``.

Format and update rules are OpenClaw's (DESIGN.md 4.1), so either tool reads what the other
wrote. memcore adds bounds (snippet length, entry cap) and never fails for good on a bad file:
a store that does not parse is moved aside and a fresh one started.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import math
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import InputError, StoreError
from memcore.recall import mirror as recall_index
from memcore.recall.mirror import Stat
from memcore.workspace.clock import iso_ms, parse_iso, utcnow
from memcore.workspace.core import (
    Workspace,
    atomic_write_bytes,
    is_daily_note_path,
    normalize_rel_path,
)

log = logging.getLogger(__name__)

MAX_QUERY_HASHES = 32
MAX_SNIPPET_CHARS = 800
MAX_STORE_BYTES = 256 * 1024 * 1024  # beyond this a store is "absurdly large" and set aside


def query_hash(query: str) -> str:
    """First 12 hex characters of SHA-1 over the trimmed, lowercased query."""
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def normalize_snippet(text: object) -> str:
    """Trim and collapse whitespace runs to one space; cap at MAX_SNIPPET_CHARS."""
    if not isinstance(text, str):
        return ""
    out = " ".join(text.split())  # the same as collapsing \s+ runs, and much faster
    if len(out) > MAX_SNIPPET_CHARS:
        out = out[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
    return out


def entry_key(path: str, start: int, end: int, source: str = "memory") -> str:
    return f"{source}:{path}:{start}:{end}"


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


def _coerce_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _coerce_float(value: Any, lo: float, hi: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return lo
    value = max(lo, float(value))
    return min(hi, value) if hi is not None else value


def normalize_entry(key: str, raw: Any, now_iso: str) -> dict[str, Any] | None:
    """One entry as OpenClaw normalises it on read; None when it must be dropped."""
    if not isinstance(raw, dict):
        return None
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        return None
    start, end = raw.get("startLine"), raw.get("endLine")
    if not _is_int(start) or not _is_int(end):
        return None
    if raw.get("source") != "memory":
        return None
    hashes = raw.get("queryHashes")
    clean_hashes: list[str] = []
    if isinstance(hashes, list):
        seen: set[str] = set()
        for h in hashes:
            if isinstance(h, str) and h and h not in seen:
                seen.add(h)
                clean_hashes.append(h)
        clean_hashes = clean_hashes[-MAX_QUERY_HASHES:]
    out: dict[str, Any] = {
        "key": key,
        "path": normalize_rel_path(path),
        "startLine": max(1, int(start)),
        "endLine": max(1, int(end)),
        "source": "memory",
        "snippet": normalize_snippet(raw.get("snippet")),
        "recallCount": _coerce_count(raw.get("recallCount")),
        "totalScore": _coerce_float(raw.get("totalScore"), 0.0, None),
        "maxScore": _coerce_float(raw.get("maxScore"), 0.0, 1.0),
        "firstRecalledAt": _iso_or(raw.get("firstRecalledAt"), now_iso),
        "lastRecalledAt": _iso_or(raw.get("lastRecalledAt"), now_iso),
        "queryHashes": clean_hashes,
    }
    promoted = raw.get("promotedAt")
    if isinstance(promoted, str) and parse_iso(promoted) is not None:
        out["promotedAt"] = promoted
    _keep_extra_fields(raw, out)
    return out


_KNOWN_FIELDS = frozenset(
    [
        "key",
        "path",
        "startLine",
        "endLine",
        "source",
        "snippet",
        "recallCount",
        "totalScore",
        "maxScore",
        "firstRecalledAt",
        "lastRecalledAt",
        "queryHashes",
        "promotedAt",
    ]
)


def _keep_extra_fields(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Carry fields memcore does not use (OpenClaw's later ``recallDays``, ``conceptTags``,
    ``dailyCount``, ``claimHash``…) over unchanged, so rewriting an entry loses nothing."""
    for k, v in old.items():
        if k not in _KNOWN_FIELDS and k not in new:
            new[k] = v


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _iso_or(value: Any, fallback: str) -> str:
    return value if isinstance(value, str) and parse_iso(value) is not None else fallback


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
    store.updated_at = iso_ms(now)
    atomic_write_bytes(ws.store_path, store.to_json_bytes())
    try:
        recall_index.update_after_write(
            ws,
            store.entries,
            before=before,
            now_iso=store.updated_at,
            changed=changed,
            removed=removed,
            complete=complete,
        )
    except (sqlite3.Error, OSError) as exc:  # the mirror rebuilds itself on the next read
        log.warning("could not update the recall index in %s: %s", ws.db_path, exc)


# -- recording --------------------------------------------------------------------------


@dataclass
class Hit:
    """One eligible search result to record."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    key: str


def parse_hits(ws: Workspace, results: Iterable[Any]) -> list[Hit]:
    """Validate result objects and keep the eligible ones (daily notes, source memory).

    Raises InputError naming the first bad field: ``memory record`` gets this from stdin.
    """
    hits: list[Hit] = []
    for i, res in enumerate(results):
        if not isinstance(res, Mapping):
            raise InputError(
                f"result {i} is not an object; "
                "expected {path, startLine, endLine, score, snippet}"
            )
        source = res.get("source", "memory")
        path = res.get("path")
        if not isinstance(path, str) or not path.strip():
            raise InputError(f"result {i}: 'path' must be a non-empty string")
        start, end = res.get("startLine"), res.get("endLine")
        for name, val in (("startLine", start), ("endLine", end)):
            if isinstance(val, bool) or not isinstance(val, int | float) or not math.isfinite(val):
                raise InputError(f"result {i}: '{name}' must be a number, got {val!r}")
        score = res.get("score", 0.0)
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise InputError(f"result {i}: 'score' must be a number, got {score!r}")
        snippet = res.get("snippet", "")
        if snippet is not None and not isinstance(snippet, str):
            raise InputError(f"result {i}: 'snippet' must be a string")
        rel = _workspace_rel(ws, path)
        if source != "memory" or not is_daily_note_path(rel):
            continue
        key = entry_key(rel, _key_num(start), _key_num(end))
        hits.append(
            Hit(
                path=rel,
                start_line=max(1, math.floor(start)),
                end_line=max(1, math.floor(end)),
                score=min(1.0, max(0.0, float(score))),
                snippet=snippet or "",
                key=key,
            )
        )
    return hits


def _key_num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _workspace_rel(ws: Workspace, path: str) -> str:
    norm = normalize_rel_path(path)
    if os.path.isabs(norm):
        try:
            return Path(norm).resolve().relative_to(ws.root.resolve()).as_posix()
        except ValueError:
            return norm
    return norm


def apply_hits(
    entries: dict[str, dict[str, Any]], query: str, hits: list[Hit], now_iso: str
) -> None:
    """OpenClaw's update rules for one search call (every hit counts, duplicates too)."""
    qh = query_hash(query)
    for hit in hits:
        old = entries.get(hit.key)
        if not isinstance(old, dict):
            old = {}
        hashes = [h for h in old.get("queryHashes") or [] if isinstance(h, str) and h]
        if qh not in hashes:
            hashes.append(qh)
        snippet = normalize_snippet(hit.snippet) or normalize_snippet(old.get("snippet"))
        entry: dict[str, Any] = {
            "key": hit.key,
            "path": hit.path,
            "startLine": hit.start_line,
            "endLine": hit.end_line,
            "source": "memory",
            "snippet": snippet,
            "recallCount": _coerce_count(old.get("recallCount")) + 1,
            "totalScore": _coerce_float(old.get("totalScore"), 0.0, None) + hit.score,
            "maxScore": max(_coerce_float(old.get("maxScore"), 0.0, 1.0), hit.score),
            "firstRecalledAt": _iso_or(old.get("firstRecalledAt"), now_iso),
            "lastRecalledAt": now_iso,
            "queryHashes": hashes[-MAX_QUERY_HASHES:],
        }
        if isinstance(old.get("promotedAt"), str):
            entry["promotedAt"] = old["promotedAt"]
        _keep_extra_fields(old, entry)
        entries[hit.key] = entry


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
        recall_index.fresh(ws, now).close()
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
    entries: dict[str, dict[str, Any]],
    max_entries: int,
    protect: Callable[[dict[str, Any]], bool] | None = None,
    keep: set[str] | None = None,
) -> list[str]:
    """Drop entries until at most ``max_entries`` remain; returns the dropped keys.

    Order: promoted entries (oldest promotion first), then the fewest recalls with the oldest
    last recall. Protected entries and ``keep`` keys are never dropped.
    """
    excess = len(entries) - max_entries
    if excess <= 0:
        return []
    keep = keep or set()

    def rank(item: tuple[str, dict[str, Any]]) -> tuple[int, str, int, str]:
        _, e = item
        promoted = e.get("promotedAt") if isinstance(e, dict) else None
        if isinstance(promoted, str):
            return (0, promoted, 0, "")
        if not isinstance(e, dict):
            return (0, "", 0, "")
        return (1, "", _coerce_count(e.get("recallCount")), str(e.get("lastRecalledAt", "")))

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
