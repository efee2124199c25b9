"""What the gateway's JSON routes and the Dreams page show: status, candidates, dream runs.

Plain functions of a workspace and ``now``; the HTTP layer (``app.py``) only parses and renders.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta
from typing import Any

from memcore.errors import WorkspaceError
from memcore.promotion import jobs as promotion_jobs
from memcore.schedule import jobs as schedule
from memcore.schedule.jobs import Job
from memcore.workspace.clock import iso_ms
from memcore.workspace.config import DreamingSettings
from memcore.workspace.core import Workspace


def settings_or_default(ws: Workspace) -> tuple[DreamingSettings, str | None]:
    """Current settings, else the last good ones, else the defaults; plus the config error."""
    settings, err = promotion_jobs.dreaming_settings_for(ws)
    return (settings or DreamingSettings()), err


def settings_kept_from(ws: Workspace) -> datetime | None:
    """When the settings used while memcore.toml is invalid were saved (None: defaults)."""
    if promotion_jobs.dreaming_settings_for(ws)[0] is None:
        return None
    return promotion_jobs.last_good_saved_at(ws)


# -- status -------------------------------------------------------------------------------

#: While only the recall store changed since the status was computed (searches recording
#: their hits), it is computed again at most once per this interval: on a 5,000-entry store
#: the why-not figures cost a quarter of a CPU-second, and a busy gateway folds a batch of
#: recordings several times a second. MEMORY.md, memcore.toml, a new day or a change made
#: through the gateway itself (:func:`forget_status`) are shown at once.
STATUS_REFRESH = timedelta(seconds=2)

_status_cache: dict[str, tuple[tuple[Any, ...], datetime, int, dict[str, Any]]] = {}
_status_locks: dict[str, threading.Lock] = {}
_status_guard = threading.Lock()
_forgotten = [0]  # how many times forget_status ran: a status computed before is not reused


def _stat_key(ws: Workspace, now: datetime, tz: Any) -> tuple[Any, ...]:
    def st(p: Any) -> tuple[int, int] | None:
        try:
            s = os.stat(p)
        except OSError:
            return None
        return (s.st_mtime_ns, s.st_size)

    return (st(ws.store_path), st(ws.memory_md), st(ws.config_path), now.astimezone(tz).date())


def forget_status(ws: Workspace | None = None) -> None:
    """Compute ``ws``'s status (every workspace's with None) afresh on the next request: the
    gateway changed the store itself (a promotion, a review, a run), so the page must not
    wait for :data:`STATUS_REFRESH` to see it."""
    with _status_guard:
        _forgotten[0] += 1
        if ws is None:
            _status_cache.clear()
        else:
            _status_cache.pop(str(ws.root), None)


def dreaming_status_cached(ws: Workspace, now: datetime) -> dict[str, Any]:
    """``memcore.status.dreaming_status``, recomputed only when a file it reads changed.

    The store, MEMORY.md and memcore.toml are keyed by (mtime_ns, size), plus today's date
    for ``promotedToday``; a 5,000-entry store is parsed once, not on every poll. When only
    the store changed, a status computed less than :data:`STATUS_REFRESH` before ``now`` is
    still served; concurrent requests of one workspace compute it once.
    """
    from memcore.promotion.status import dreaming_status

    settings, _err = settings_or_default(ws)
    key = _stat_key(ws, now, settings.tz)
    root = str(ws.root)
    with _status_guard:
        lock = _status_locks.setdefault(root, threading.Lock())
    with lock:
        with _status_guard:
            hit, gen = _status_cache.get(root), _forgotten[0]
        if hit is not None:
            known, at, at_gen, value = hit
            recent = at_gen == gen and timedelta(0) <= now - at < STATUS_REFRESH
            if known == key or (recent and known[1:] == key[1:]):
                return dict(value)
        out = dreaming_status(ws, now)
        with _status_guard:
            _status_cache[root] = (key, now, gen, out)
    return dict(out)


def next_run_json(due: datetime | None, tz_name: str) -> dict[str, Any] | None:
    if due is None:
        return None
    from zoneinfo import ZoneInfo

    local = due.astimezone(ZoneInfo(tz_name))
    return {"utc": iso_ms(due), "local": local.isoformat(timespec="minutes"), "timezone": tz_name}


def status_payload(ws: Workspace, now: datetime) -> dict[str, Any]:
    """``GET /api/status`` for one workspace (without the gateway-level fields)."""
    if not ws.root.is_dir():
        raise WorkspaceError(f"workspace {ws.root} does not exist any more")
    out = dreaming_status_cached(ws, now)
    settings, err = settings_or_default(ws)
    if err is not None and promotion_jobs.dreaming_settings_for(ws)[0] is not None:
        # the file is invalid now: show the settings the schedule still runs on
        out.update(
            {
                "mode": settings.mode,
                "enabled": settings.enabled,
                "cron": settings.cron,
                "timezone": settings.timezone,
                "limit": settings.limit,
                "minScore": settings.min_score,
                "minRecallCount": settings.min_recall_count,
                "minUniqueQueries": settings.min_unique_queries,
            }
        )
    jobs: dict[str, Any] = {}
    promote_due: datetime | None = None
    for job in schedule.registered_jobs():
        due, state = schedule.compute_due(ws, job, now)
        j = state.to_json()
        j["nextRunAt"] = next_run_json(due, settings.timezone)
        jobs[job.name] = j
        if job.name == "promote":
            promote_due = due
    out["nextRunAt"] = next_run_json(promote_due, settings.timezone)
    out["jobs"] = jobs
    runs = schedule.recent_runs(ws, 1)
    out["lastRun"] = runs[0] if runs else None
    schedule_error = next((j["configError"] for j in jobs.values() if j.get("configError")), None)
    out["memoryError"] = memory_md_error(ws)
    out["configError"] = out.get("configError") or err or schedule_error
    if out["configError"]:
        since = min(
            (j["configErrorSince"] for j in jobs.values() if j.get("configErrorSince")),
            default=None,
        )
        out["configErrorSince"] = since
        kept = settings_kept_from(ws) if err is not None else None
        out["lastGoodSettingsAt"] = iso_ms(kept) if kept is not None else None
        out["scheduleNote"] = (
            "memcore.toml is invalid"
            + (f" since {since}" if since else "")
            + (
                f"; the last good schedule is kept (settings of {iso_ms(kept)})"
                if kept is not None
                else "; the last good schedule is kept"
            )
        )
    return out


def memory_md_error(ws: Workspace) -> str | None:
    """Why MEMORY.md cannot be read (the page shows a banner, not "Long-term 0"), or None."""
    from memcore.workspace import safe_read

    if not os.path.lexists(ws.memory_md):
        return None
    try:
        safe_read.read_bytes(ws, ws.memory_md, max_bytes=safe_read.MEMORY_MD_MAX_BYTES)
    except (WorkspaceError, OSError) as exc:
        return str(exc)
    return None


def sizes_snapshot(ws: Workspace, now: datetime) -> dict[str, Any]:
    """The recall store and MEMORY.md after a run (the page charts them over time)."""
    st = dreaming_status_cached(ws, now)
    return {
        "storeEntries": st.get("shortTermCount", 0) + st.get("promotedTotal", 0),
        "shortTerm": st.get("shortTermCount", 0),
        "storeBytes": (st.get("storeHealth") or {}).get("sizeBytes", 0),
        "memoryEntries": st.get("longTermCount", 0),
        "memoryChars": (st.get("memorySize") or {}).get("chars", 0),
    }


# -- candidates ---------------------------------------------------------------------------


_cand_cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}


def candidates_payload(ws: Workspace, now: datetime, limit: int = 25) -> dict[str, Any]:
    """Every unpromoted short-term entry scored, best first, with the gate it fails (if any).

    Cached while the store and config are unchanged, for at most a minute (recency moves).
    """
    settings, _err = settings_or_default(ws)
    key = (*_stat_key(ws, now, settings.tz), int(now.timestamp() // 60), limit)
    hit = _cand_cache.get(str(ws.root))
    if hit is not None and hit[0] == key:
        return hit[1]
    out = _candidates(ws, now, limit)
    _cand_cache[str(ws.root)] = (key, out)
    return out


def _candidates(ws: Workspace, now: datetime, limit: int) -> dict[str, Any]:
    from memcore.recall.scoring import (
        Thresholds,
        first_failed_gate,
        gate_checks,
        is_eligible,
        score_entry,
    )
    from memcore.recall.store import read_view
    from memcore.recall.why_not import why_not

    settings, err = settings_or_default(ws)
    th = Thresholds.from_settings(settings).sanitized()
    store = read_view(ws, now)  # a page view: pending recalls count, nothing is written
    scored = []
    for e in store.entries.values():
        if not is_eligible(e):
            continue
        c = score_entry(e, now, th)
        scored.append(c)
    scored.sort(key=lambda c: (-c.score, -c.recall_count, c.path))
    rows: list[dict[str, Any]] = []
    qualifying = 0
    for c in scored:
        failed = first_failed_gate(c, th)
        qualifying += failed is None
        if len(rows) >= limit:
            continue
        row = c.to_json()
        row["failedGate"] = failed
        row["qualifies"] = failed is None
        row["whyNot"] = None if failed is None else why_not(c, th)
        row["gates"] = [
            {"name": g.name, "passed": g.passed, "actual": g.actual, "required": g.required}
            for g in gate_checks(c, th)
        ]
        rows.append(row)
    return {
        "thresholds": {
            "minScore": th.min_score,
            "minRecallCount": th.min_recall_count,
            "minUniqueQueries": th.min_unique_queries,
            "minRelevance": th.min_relevance,
            "limit": settings.limit,
        },
        "total": len(scored),
        "qualifying": qualifying,
        "candidates": rows,
        "configError": err,
    }


# -- dream now ----------------------------------------------------------------------------


def dream_now(ws: Workspace, now: datetime) -> dict[str, Any]:
    """Run the workspace's dream cycle once, by hand (promotion included whatever the mode),
    and return its stats: the cycle's result keys plus its other scalar counters."""
    from memcore.dream.cycle import RESULT_KEYS, run_cycle

    stats = run_cycle(ws, now=now, mode="auto", trigger="page")
    out: dict[str, Any] = {k: stats[k] for k in RESULT_KEYS}
    for k, v in stats.items():  # runId, reviewPending, ...
        if isinstance(v, int | float | str | bool) or v is None:
            out.setdefault(k, v)
    return out


DREAM_JOB = Job(
    name="dream",
    next_due=lambda ws, now, state: None,  # manual only: the scheduled jobs are registered
    run=dream_now,
    description="the dream cycle, run from the API or the Dreams page",
)


def promote_counters(result: dict[str, Any]) -> dict[str, Any]:
    applied = result.get("apply") or {}
    return {
        "candidates": len(result.get("candidates") or []),
        "promoted": int(applied.get("applied", 0) or 0),
        "skipped": len(applied.get("skipped") or []),
    }


# -- review queue and session dreaming ------------------------------------------------------


def review_payload(ws: Workspace) -> list[dict[str, Any]]:
    """Items waiting for review (``memcore.dream.review.pending``), oldest first."""
    from memcore.dream import review

    if not ws.root.is_dir():
        raise WorkspaceError(f"workspace {ws.root} does not exist any more")
    return review.pending(ws)


def resolve_review(ws: Workspace, item: int, choice: str, now: datetime) -> dict[str, Any]:
    """Settle one review item (``memcore.dream.review.resolve``); InputError on a bad choice."""
    from memcore.dream import review

    return review.resolve(ws, item, choice, now=now, trigger="page")


_health_cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}


def _health_cached(ws: Workspace, now: datetime) -> dict[str, Any]:
    """``health_report``, recomputed when MEMORY.md, the store, the config or ``memory/``
    changed, and at least every 30 s (topic files deeper down do not touch those mtimes)."""
    from memcore.sessions.health import health_report

    def st(p: Any) -> tuple[int, int] | None:
        try:
            s = os.stat(p)
        except OSError:
            return None
        return (s.st_mtime_ns, s.st_size)

    key = (
        st(ws.memory_md),
        st(ws.db_path),
        st(ws.config_path),
        st(ws.memory_dir),
        int(now.timestamp() // 30),
    )
    hit = _health_cache.get(str(ws.root))
    if hit is not None and hit[0] == key:
        return hit[1]
    out = health_report(ws)
    _health_cache[str(ws.root)] = (key, out)
    return out


def sessions_payload(ws: Workspace, now: datetime) -> dict[str, Any]:
    """``GET /api/sessions``: session dreaming status (with the last run's report) and the
    health of memory. A part that fails carries ``{"error": ...}`` instead of failing both."""
    import sqlite3

    from memcore import sessions
    from memcore.errors import MemcoreError

    if not ws.root.is_dir():
        raise WorkspaceError(f"workspace {ws.root} does not exist any more")
    parts: dict[str, Any] = {
        "status": lambda: sessions.status(ws, now),
        "health": lambda: _health_cached(ws, now),
    }
    out: dict[str, Any] = {}
    for name, fn in parts.items():
        try:
            out[name] = fn()
        except (MemcoreError, sqlite3.Error, OSError) as exc:
            # e.g. an invalid [sessions] table, or the store locked by a running dream
            out[name] = {
                "error": str(exc)
                if isinstance(exc, MemcoreError)
                else f"{type(exc).__name__}: {exc}"
            }
    return out
