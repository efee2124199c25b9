"""Scheduled jobs: the registry, cron/interval due times, and job state in ``memcore.sqlite``.

The schedule is *derived* at every tick from the workspace's config and the persisted state,
never kept only in memory: a restart cannot lose it and a config edit takes effect at once.

A job is a :class:`Job`: ``next_due(ws, now, state)`` says when it is next due (a time in the
past means "due now"; ``None`` means disabled) and ``run(ws, now)`` does the work and returns
its counters. Other modules add jobs with :func:`register_job` at import time; the gateway
imports :data:`JOB_MODULES` so their registrations happen.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memcore.errors import InputError, JobSkipped, MemcoreError
from memcore.schedule.state import (
    JobState,
    _finish_run,
    _start_run,
    claim_slot,
    close_connections,
    load_state,
    load_states,
    mark_interrupted,
    recent_runs,
    save_state,
)
from memcore.workspace.core import Workspace

__all__ = [
    "JOB_MODULES",
    "Job",
    "JobSkipped",
    "JobState",
    "RunOutcome",
    "close_connections",
    "compute_due",
    "cron_next_due",
    "cron_prev_slot",
    "cron_slots_after",
    "execute",
    "get_job",
    "interval_next_due",
    "load_job_modules",
    "load_state",
    "load_states",
    "mark_interrupted",
    "note_cadence",
    "recent_runs",
    "register_job",
    "registered_jobs",
    "save_state",
    "unregister_job",
]

log = logging.getLogger("memcore.schedule.jobs")

#: Modules that register jobs when imported (missing ones are skipped).
JOB_MODULES: tuple[str, ...] = (
    "memcore.promotion.jobs",
    "memcore.dream.jobs",
    "memcore.sessions.jobs",
)


@dataclass(frozen=True)
class Job:
    """A scheduled job. ``next_due`` must be cheap and pure (reads config and ``state``)."""

    name: str
    next_due: Callable[[Workspace, datetime, JobState], datetime | None]
    run: Callable[[Workspace, datetime], dict[str, Any]]
    description: str = ""
    hold_lock: bool = True  # the runner holds ws.lock() around run (set False if run locks itself)
    lock_timeout: float = 30.0
    poll_seconds: float | None = None  # re-check at least this often (interval jobs); None = exact


_REGISTRY: dict[str, Job] = {}
_REGISTRY_LOCK = threading.Lock()


def register_job(job: Job) -> Job:
    """Add (or replace, by name) a job in the module-level registry. Returns the job."""
    if not job.name or not job.name.replace("-", "").replace("_", "").isalnum():
        raise InputError(f"job name {job.name!r} must be letters, digits, '-' or '_'")
    with _REGISTRY_LOCK:
        _REGISTRY[job.name] = job
    return job


def unregister_job(name: str) -> None:
    """Remove a job (tests)."""
    with _REGISTRY_LOCK:
        _REGISTRY.pop(name, None)


def registered_jobs() -> list[Job]:
    """All registered jobs, ``promote`` first, then by name."""
    with _REGISTRY_LOCK:
        jobs = list(_REGISTRY.values())
    return sorted(jobs, key=lambda j: (j.name != "promote", j.name))


def get_job(name: str) -> Job:
    with _REGISTRY_LOCK:
        job = _REGISTRY.get(name)
    if job is None:
        raise InputError(f"no job named {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return job


def load_job_modules(modules: tuple[str, ...] = JOB_MODULES) -> list[str]:
    """Import the modules that register jobs; return those that loaded. Missing ones are fine."""
    loaded = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # the module itself does not exist (yet)
            log.exception("job module %s failed to import", name)
        except Exception:
            log.exception("job module %s failed to import", name)
        else:
            loaded.append(name)
    return loaded


# -- due times ------------------------------------------------------------------------


def cron_slots_after(cron: str, tz: ZoneInfo, after: datetime, count: int = 1) -> list[datetime]:
    """The next ``count`` cron slots strictly after ``after``, aware in ``tz``, DST-safe.

    A wall-clock time that repeats at DST fall-back yields one slot (the first), never two.
    """
    from croniter import croniter

    start = after.astimezone(tz)
    it = croniter(cron, start)
    out: list[datetime] = []
    last_wall = start.replace(tzinfo=None)
    guard = 0
    while len(out) < count and guard < count * 4 + 10:
        guard += 1
        slot = it.get_next(datetime).astimezone(tz)
        wall = slot.replace(tzinfo=None)
        if wall <= last_wall:  # repeated wall-clock hour at fall-back: fire once
            continue
        if slot.timestamp() <= after.timestamp():
            continue
        out.append(slot)
        last_wall = wall
    return out


def cron_prev_slot(cron: str, tz: ZoneInfo, at: datetime) -> datetime | None:
    """The latest cron slot at or before ``at`` (aware in ``tz``)."""
    from croniter import croniter

    it = croniter(cron, at.astimezone(tz) + timedelta(microseconds=1))
    try:
        slot = it.get_prev(datetime).astimezone(tz)
    except Exception:  # croniter raises when no previous slot exists
        return None
    return slot if slot.timestamp() <= at.timestamp() else None


def cron_next_due(cron: str, tz: ZoneInfo, now: datetime, state: JobState) -> datetime:
    """Due time of a cron job: the first slot after the last consumed one (or the baseline).

    When slots were missed (the gateway was down), the *latest* missed slot is returned, which
    is in the past, so the job runs once now and the older missed slots are skipped: no burst.
    """
    note_cadence(state, {"cron": cron, "tz": getattr(tz, "key", None) or str(tz)}, now)
    # a changed cadence counts from the change: its past slots never fire
    base = _latest(state.last_slot, state.created_at, state.cadence_since) or now
    nxt = cron_slots_after(cron, tz, base)
    if not nxt:
        raise InputError(f"cron {cron!r} has no future slot")
    slot = nxt[0]
    if slot.timestamp() > now.timestamp():
        return slot
    prev = cron_prev_slot(cron, tz, now)
    if prev is not None and prev.timestamp() > base.timestamp():
        # the wall-clock repeat guard: a later slot with the same wall time as the last is no slot
        if state.last_slot is not None:
            last_wall = state.last_slot.astimezone(tz).replace(tzinfo=None)
            if prev.replace(tzinfo=None) <= last_wall:
                return slot
        return prev
    return slot


def interval_next_due(interval: timedelta, now: datetime, state: JobState) -> datetime:
    """Due time of an interval job: ``interval`` after the last run (or after first sight)."""
    note_cadence(state, {"interval": interval.total_seconds()}, now)
    base = state.last_run_at or state.created_at or now
    return base + interval


def note_cadence(state: JobState, cadence: dict[str, Any], now: datetime) -> None:
    """Remember the job's cadence (the last good one, kept when the config turns invalid);
    a change from the one remembered sets ``cadence_since`` to ``now``."""
    text = json.dumps(cadence, sort_keys=True)
    if state.cadence == text:
        return
    if state.cadence is not None:
        state.cadence_since = now
    state.cadence = text


def _due_on_last_good(state: JobState, now: datetime) -> datetime | None:
    """The next due time on the remembered cadence (the config is invalid now): every later
    slot keeps coming, not only the one stored before the config broke."""
    if state.cadence is None:
        return state.next_run_at
    cadence = json.loads(state.cadence)
    if "cron" in cadence:
        tz = ZoneInfo(cadence["tz"])
        base = _latest(state.last_slot, state.created_at, state.cadence_since) or now
        if state.next_run_at is not None and state.next_run_at.timestamp() > base.timestamp():
            return state.next_run_at  # not consumed yet
        nxt = cron_slots_after(cadence["cron"], tz, base)
        return nxt[0] if nxt else None
    base = state.last_run_at or state.created_at or now
    return base + timedelta(seconds=float(cadence["interval"]))


def _latest(*values: datetime | None) -> datetime | None:
    present = [v for v in values if v is not None]
    return max(present, key=lambda d: d.timestamp()) if present else None


# -- state in memcore.sqlite --------------------------------------------------------------


@dataclass
class RunOutcome:
    job: str
    status: str  # ok | failed | skipped | claimed (another gateway had the slot)
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    duration_ms: int = 0
    run_id: int = 0
    error_type: str | None = None  # the exception's class name when status is failed


def execute(
    ws: Workspace,
    job: Job,
    now: datetime,
    *,
    trigger: str = "schedule",
    slot: datetime | None = None,
    clock: Callable[[], datetime] | None = None,
    owner: str | None = None,
) -> RunOutcome:
    """Run ``job`` once and record it (state + run row). Never raises for a job's failure.

    With ``slot`` and ``owner`` (a gateway's id) the slot is first claimed in memcore.sqlite;
    when another gateway claimed it, nothing runs and the outcome's status is ``claimed``.

    ``slot`` is the due time this run consumes (scheduled runs); manual runs pass None and
    leave the schedule alone. ``clock`` gives the finish time (default: ``now`` + elapsed).
    """
    import time
    import traceback

    if slot is not None and owner is not None and not claim_slot(ws, job.name, slot, owner, now):
        log.info(
            "slot already claimed workspace=%s job=%s slot=%s (another gateway ran it)",
            ws.root,
            job.name,
            slot.isoformat(),
        )
        return RunOutcome(job.name, "claimed")
    state = load_state(ws, job.name)
    if state.created_at is None:
        state.created_at = now
    state.running = True
    state.last_run_at = now
    save_state(ws, state)
    run_id = _start_run(ws, job.name, trigger, slot, now)
    log.info("run start workspace=%s job=%s trigger=%s run=%d", ws.root, job.name, trigger, run_id)
    t0 = time.monotonic()
    status, result, error, error_type = "ok", {}, None, None
    try:
        if job.hold_lock:
            with ws.lock(timeout=job.lock_timeout):
                result = job.run(ws, now) or {}
        else:
            result = job.run(ws, now) or {}
    except JobSkipped as skip:
        status, result = "skipped", {**skip.result, "skipped": skip.reason}
        log.info("run skipped workspace=%s job=%s reason=%s", ws.root, job.name, skip.reason)
    except Exception as exc:
        status, error_type = "failed", type(exc).__name__
        error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, MemcoreError) else str(exc)
        log.error(
            "run failed workspace=%s job=%s error=%s\n%s",
            ws.root,
            job.name,
            error,
            traceback.format_exc().rstrip(),
        )
    elapsed = time.monotonic() - t0
    finished = clock() if clock else now + timedelta(seconds=elapsed)
    ms = int(elapsed * 1000)
    with contextlib.suppress(MemcoreError, sqlite3.Error, OSError):
        _finish_run(ws, run_id, status, result, error, now, finished)
        state = load_state(ws, job.name)
        state.running = False
        state.last_status = status
        state.last_result = result if status != "failed" else state.last_result
        state.last_error = error
        state.consecutive_failures = state.consecutive_failures + 1 if status == "failed" else 0
        if slot is not None:
            state.last_slot = _latest(state.last_slot, slot)
        save_state(ws, state)
    counters = " ".join(f"{k}={v}" for k, v in result.items() if isinstance(v, int | float | str))
    log.info(
        "run end workspace=%s job=%s status=%s duration_ms=%d %s",
        ws.root,
        job.name,
        status,
        ms,
        counters,
    )
    return RunOutcome(job.name, status, result, error, ms, run_id, error_type)


def compute_due(
    ws: Workspace, job: Job, now: datetime, *, save: bool = True
) -> tuple[datetime | None, JobState]:
    """Next due time of ``job`` and its (updated, saved) state.

    On an error in ``next_due`` (e.g. the config was edited into an invalid state) the last
    good ``next_run_at`` is kept and the error is stored in ``state.config_error``.
    """
    state = load_state(ws, job.name)
    changed = False
    if state.created_at is None:
        state.created_at = now
        changed = True
    before = (state.cadence, state.cadence_since)
    try:
        due = job.next_due(ws, now, state)
        err = None
    except MemcoreError as exc:
        due, err = _due_on_last_good(state, now), str(exc)
    except Exception as exc:
        due, err = _due_on_last_good(state, now), f"{type(exc).__name__}: {exc}"
        log.exception("next_due failed workspace=%s job=%s", ws.root, job.name)
    if (state.cadence, state.cadence_since) != before:
        changed = True
        if before[0] is not None:
            log.info(
                "schedule changed workspace=%s job=%s cadence=%s (slots from now: config-change)",
                ws.root,
                job.name,
                state.cadence,
            )
    if err is not None:
        if state.config_error is None:
            state.config_error_since = now
        if due is not None and due.timestamp() > now.timestamp() and due != state.next_run_at:
            state.next_run_at = due
        if err != state.config_error:
            log.error(
                "schedule error workspace=%s job=%s error=%s (keeping last good schedule)",
                ws.root,
                job.name,
                err,
            )
        state.config_error = err
        changed = True
    else:
        if state.config_error is not None:
            state.config_error = None
            state.config_error_since = None
            changed = True
        # A due time in the past ("due now", e.g. an interval job that never ran) is not
        # stored: it would change on every call and turn each status read into a write.
        future = due is None or due.timestamp() > now.timestamp()
        if future and due != state.next_run_at:
            state.next_run_at = due
            changed = True
    if changed and save:
        save_state(ws, state)
    return due, state
