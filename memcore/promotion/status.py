"""Health and status of a workspace's dreaming: counts, store health, lock, warnings.

Used by ``memcore memory status``, the gateway's ``/api/status`` and the Dreams page.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Callable
from datetime import datetime, time
from typing import Any

from memcore.errors import ConfigError, MemcoreError
from memcore.recall import mirror as recall_index
from memcore.recall.evicted import summary as evicted_summary
from memcore.recall.log import pending_events
from memcore.recall.scoring import Thresholds, feasibility
from memcore.recall.store import fresh_mirror, quarantined_files
from memcore.workspace import db, safe_read
from memcore.workspace.clock import utcnow
from memcore.workspace.config import DreamingSettings, dreaming_settings, load_config
from memcore.workspace.core import Workspace

_COUNT_CACHE = """CREATE TABLE IF NOT EXISTS memory_md_count_cache (
    id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER, mtime_ns INTEGER, ino INTEGER,
    entries INTEGER NOT NULL)"""
_CHARS_CACHE = """CREATE TABLE IF NOT EXISTS memory_md_chars_cache (
    id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER, mtime_ns INTEGER, ino INTEGER,
    chars INTEGER NOT NULL)"""


def long_term_count(ws: Workspace) -> int:
    """Entries in MEMORY.md, as consolidation parses them (top-level bullets and paragraphs).

    Parsing a 20 MB MEMORY.md takes seconds, so the count is cached in memcore.sqlite by the
    file's size, mtime and inode (only when the database exists: status creates nothing)."""
    from memcore.workspace.entries import count_entries

    return _memory_md_figure(ws, "memory_md_count_cache", count_entries)


def _memory_md_figure(ws: Workspace, table: str, compute: Callable[[str], int]) -> int:
    """``compute(MEMORY.md's text)``, cached in ``table`` by the file's size, mtime and inode
    (0 when there is no readable MEMORY.md)."""
    try:
        st = ws.memory_md.stat()
    except OSError:
        return 0
    stat = (st.st_size, st.st_mtime_ns, st.st_ino)
    conn = _count_cache(ws)
    try:
        if conn is not None:
            row = conn.execute(
                f"SELECT size, mtime_ns, ino, {_COLUMN[table]} FROM {table} WHERE id = 1"
            ).fetchone()
            if row is not None and tuple(row[:3]) == stat:
                return int(row[3])
        try:
            text = (
                safe_read.read_text(ws, ws.memory_md, max_bytes=safe_read.MEMORY_MD_MAX_BYTES)
                if ws.memory_md.is_file()
                else ""
            )
        except MemcoreError:
            return 0
        n = compute(text)
        if conn is not None:
            # a busy or read-only database: the figure is right, just not kept
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"INSERT OR REPLACE INTO {table} VALUES (1, ?, ?, ?, ?)", (*stat, n))
        return n
    finally:
        if conn is not None:
            conn.close()


_COLUMN = {"memory_md_count_cache": "entries", "memory_md_chars_cache": "chars"}


def _count_cache(ws: Workspace) -> sqlite3.Connection | None:
    if not ws.db_path.exists():
        return None
    try:
        conn = db.connect(ws.db_path)
        conn.execute(_COUNT_CACHE)
        conn.execute(_CHARS_CACHE)
    except (sqlite3.Error, OSError, MemcoreError):
        return None
    return conn


def store_counts(ws: Workspace, now: datetime, settings: DreamingSettings) -> dict[str, Any]:
    """Short-term and promoted counts of the recall store, plus its health."""
    health: dict[str, Any] = {
        "entries": 0,
        "invalid": 0,
        "sizeBytes": ws.store_path.stat().st_size if ws.store_path.is_file() else 0,
        "updatedAt": None,
        "quarantined": [str(p) for p in quarantined_files(ws)],
        "error": None,
    }
    out: dict[str, Any] = {
        "shortTermCount": 0,
        "promotedTotal": 0,
        "notDailyNoteCount": 0,
        "promotedToday": 0,
        "lastPromotedAt": None,
        "storeHealth": health,
    }
    health["evicted"] = evicted_summary(ws)
    try:
        health["pendingRecalls"] = len(pending_events(ws))
        conn = fresh_mirror(ws, now, read_only=True)
        try:
            start = datetime.combine(now.astimezone(settings.tz).date(), time(), settings.tz)
            totals = recall_index.counts(conn, day_start=start)
        finally:
            conn.close()
    except (MemcoreError, sqlite3.Error, OSError) as exc:
        health["error"] = str(exc)
        return out
    health["entries"] = totals["entries"]
    health["invalid"] = totals["invalid"]
    health["updatedAt"] = _updated_at(ws)
    out["shortTermCount"] = totals["shortTerm"]
    out["promotedTotal"] = totals["promoted"]
    out["notDailyNoteCount"] = totals["notDailyNote"]
    out["promotedToday"] = totals["promotedSince"]
    out["lastPromotedAt"] = totals["lastPromotedAt"]
    return out


def _updated_at(ws: Workspace) -> str | None:
    """``updatedAt`` of the store, read from the head of the file (it is the second key)."""
    try:
        with open(ws.store_path, "rb") as fh:
            head = fh.read(256).decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r'"updatedAt"\s*:\s*"([^"]+)"', head)
    return m.group(1) if m else None


def last_record_error(ws: Workspace) -> dict[str, Any] | None:
    path = ws.dreams_dir / "recall-errors.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lock_state(ws: Workspace) -> str:
    """``free``, ``held`` (by another memcore process or thread, or by OpenClaw) or ``stale``
    (a dead holder's lock file, cleared by the next run)."""
    from filelock import FileLock, Timeout

    from memcore.workspace.core import shared_lock_owner

    if not ws.dreams_dir.is_dir():
        return "free"
    if ws.flock_path.exists():
        lock = FileLock(str(ws.flock_path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return "held"
        lock.release()
    if not ws.lock_path.exists():
        return "free"
    pid, stale = shared_lock_owner(ws.lock_path)
    if stale:
        return "stale"
    return f"held by process {pid}" if pid else "held"


def dreaming_status(ws: Workspace, now: datetime | None = None) -> dict[str, Any]:
    """Mode, schedule, thresholds and counts (the gateway's ``/api/status`` core)."""
    now = now or utcnow()
    out: dict[str, Any] = {"workspace": str(ws.root), "configError": None}
    try:
        s = dreaming_settings(load_config(ws))
    except ConfigError as exc:
        out["configError"] = str(exc)
        s = DreamingSettings()
    out.update(
        {
            "mode": s.mode,
            "enabled": s.enabled,
            "cron": s.cron,
            "timezone": s.timezone,
            "limit": s.limit,
            "minScore": s.min_score,
            "minRecallCount": s.min_recall_count,
            "minUniqueQueries": s.min_unique_queries,
            "recencyHalfLifeDays": s.recency_half_life_days,
            "maxEntries": s.max_entries,
        }
    )
    out.update(store_counts(ws, now, s))
    out["longTermCount"] = long_term_count(ws)
    out["nearest"] = nearest_candidates(ws, now, Thresholds.from_settings(s), 5)
    out["memorySize"] = memory_size(ws)
    out["dbQuarantines"] = db_quarantines(ws)
    return out


def memory_size(ws: Workspace) -> dict[str, Any]:
    """MEMORY.md's size in characters against ``[memory] budget_chars``."""
    from memcore.promotion.budget import DEFAULT_BUDGET_CHARS, budget_chars

    chars = _memory_md_figure(ws, "memory_md_chars_cache", len)  # cached like the count
    try:
        budget, error = budget_chars(ws), None
    except ConfigError as exc:
        budget, error = DEFAULT_BUDGET_CHARS, str(exc)
    return {"chars": chars, "budgetChars": budget, "overBudget": chars > budget, "error": error}


def db_quarantines(ws: Workspace) -> list[dict[str, Any]]:
    """Past quarantines of memcore.sqlite, read without creating the database."""
    from memcore.workspace import db

    if not ws.db_path.is_file():
        return []
    try:
        conn = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return db.quarantines(conn)
    finally:
        conn.close()


def warnings_for(ws: Workspace, status: dict[str, Any]) -> list[str]:
    """Warnings a user needs, each one line with what to do."""
    warns: list[str] = []
    if status.get("configError"):
        warns.append(f"Config error (defaults in use): {status['configError']}")
    health = status.get("storeHealth", {})
    if health.get("error"):
        warns.append(f"Recall store unreadable: {health['error']}")
    for q in health.get("quarantined", []):
        warns.append(f"A corrupt recall store was set aside: {q} (inspect it, then delete it)")
    for ev in health.get("evicted", []):
        n = ev["entries"]
        warns.append(
            f"{'?' if n is None else n} recall entries over max_entries were set aside in "
            f"{ev['path']} (restore: memcore memory status --fix)"
        )
    for q in status.get("dbQuarantines", []):
        lost = "; ".join(f"{t} ({why})" for t, why in q["lost"].items()) or "nothing"
        warns.append(
            f"memcore.sqlite was corrupt and set aside as {q['aside']} at {q['at']}; "
            f"recovered {sum(q['recovered'].values())} rows; lost: {lost}"
        )
    if health.get("invalid"):
        warns.append(
            f"Recall store contains {health['invalid']} invalid entr"
            f"{'y' if health['invalid'] == 1 else 'ies'} (fix: memcore memory status --fix)"
        )
    size = status.get("memorySize") or {}
    if size.get("overBudget"):
        warns.append(
            f"MEMORY.md is {size['chars']} characters, over [memory] budget_chars = "
            f"{size['budgetChars']}: nothing more is promoted until dream merges or forgets "
            "entries, or the budget is raised"
        )
    err = last_record_error(ws)
    if err and not err.get("resolvedAt"):
        warns.append(f"Recording recalls failed at {err.get('at')}: {err.get('error')}")
    if not status.get("configError"):
        try:
            th = Thresholds.from_settings(dreaming_settings(load_config(ws)))
        except ConfigError:
            th = Thresholds()
        f = feasibility(th)
        if not f["feasible"]:
            hint = ""
            if "reachableAt" in f:
                r = f["reachableAt"]
                hint = (
                    f"; reachable with min_recall_count >= {r['recallCount']} and "
                    f"min_unique_queries >= {r['uniqueQueries']} at mean relevance "
                    f"{r['minRelevance']}, or a lower min_score"
                )
            warns.append(
                f"Mode {status['mode']}'s gates cannot be met: min_score {th.min_score:g} at "
                f"{f['minRecallCount']} recalls and {f['minUniqueQueries']} queries needs a mean "
                f"relevance of {f['minRelevanceAtMinimumCounts']}, above 1{hint}"
            )
    return warns


def _store_entries(ws: Workspace, now: datetime) -> list[dict[str, Any]]:
    """Unpromoted daily-note entries of the store with recalls, read without writing."""
    try:
        conn = fresh_mirror(ws, now, read_only=True)
    except (MemcoreError, sqlite3.Error, OSError):
        return []
    try:
        rows = conn.execute(
            "SELECT * FROM recall_index WHERE eligible = 1 AND recall_count > 0"
            " AND promoted_at IS NULL"
        ).fetchall()
        return [recall_index.row_entry(r) for r in rows]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def nearest_candidates(
    ws: Workspace, now: datetime, th: Thresholds, limit: int = 5
) -> list[dict[str, Any]]:
    """The entries closest to passing the gates, each with ``whyNot`` (see recall.why_not).

    A big store is scored as arrays (:func:`memcore.recall.columns.nearest_mirror`, the same
    answer): one entry at a time took seconds at 100,000 entries."""
    from memcore.recall.why_not import nearest

    try:
        conn = fresh_mirror(ws, now, read_only=True)
    except (MemcoreError, sqlite3.Error, OSError):
        return []
    try:
        (n,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM recall_index WHERE eligible = 1"
            " AND recall_count > 0 AND promoted_at IS NULL LIMIT ?)",
            (_PER_ENTRY_MAX + 1,),
        ).fetchone()
        if n > _PER_ENTRY_MAX:
            from memcore.recall.columns import nearest_mirror

            return nearest_mirror(conn, now, th, limit)
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return nearest(_store_entries(ws, now), now, th, limit)


#: Stores up to this many open entries are scored one by one (no numpy import for them).
_PER_ENTRY_MAX = 2000


def mode_warnings(ws: Workspace, mode: str, th: Thresholds, now: datetime) -> list[str]:
    """What stands between a mode's gates and a first promotion right now: gates no mean
    relevance can meet at their minimum counts, or a store none of whose entries can reach
    them within a few searches. Empty when an entry passes or is close."""
    from memcore.recall.scoring import rank
    from memcore.recall.why_not import MAX_SEARCHES, nearest

    th = th.sanitized()
    warns: list[str] = []
    f = feasibility(th)
    if not f["feasible"]:
        hint = ""
        if "reachableAt" in f:
            r = f["reachableAt"]
            hint = (
                f"; an entry needs about {r['recallCount']} recalls from {r['uniqueQueries']} "
                f"distinct queries at a mean relevance of {r['minRelevance']}"
            )
        warns.append(
            f"{mode}'s gates cannot be met at their minimum counts: min_score "
            f"{th.min_score:g} at {f['minRecallCount']} recalls and {f['minUniqueQueries']} "
            f"queries needs a mean relevance of {f['minRelevanceAtMinimumCounts']}, above 1" + hint
        )
    entries = _store_entries(ws, now)
    if rank(entries, now, th):
        return warns
    near = nearest(entries, now, th, 1)
    if not entries:
        warns.append(
            f"nothing can be promoted in {mode} yet: the recall store has no recalls "
            "(searches record them; memcore memory backfill seeds them from the notes)"
        )
    elif not near or near[0]["whyNot"]["searchesNeeded"] is None:
        warns.append(
            f"no entry of the recall store can reach {mode}'s gates within {MAX_SEARCHES} "
            "searches at the relevance its hits have now"
        )
    return warns
