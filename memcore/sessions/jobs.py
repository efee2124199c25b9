"""The ``sessions`` scheduler job: an automatic session dream, checked every hour.

Gates (see ``memcore.sessions.due``): enabled, at least ``min_sessions`` candidates,
``interval_days`` since the last successful run, one hour after a failure, budget left today.
The run takes the session lease itself, so the job does not hold the workspace lock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memcore.errors import ConfigError, JobSkipped, MemcoreError
from memcore.schedule.jobs import Job, JobState, note_cadence, register_job
from memcore.workspace.core import Workspace

if TYPE_CHECKING:
    from memcore.sessions.settings import SessionsSettings

POLL = timedelta(hours=1)


def sessions_settings_for(ws: Workspace) -> tuple[SessionsSettings | None, str | None]:
    """The workspace's ``[sessions]`` settings and the config error, if any: while
    memcore.toml is invalid, the last good settings (kept in memcore.sqlite, see
    ``memcore.workspace.last_good``) with the error; None settings when there never were
    good ones. The automatic runs go on with them, as the promote job's do."""
    from memcore.sessions.settings import SessionsSettings, sessions_settings
    from memcore.workspace import last_good
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    return last_good.current_or_last_good(
        ws, "sessions", lambda: sessions_settings(load_config(ws)), SessionsSettings, utcnow()
    )


def _next_due(ws: Workspace, now: datetime, state: JobState) -> datetime | None:
    from memcore.sessions import due

    settings, err = sessions_settings_for(ws)
    if settings is not None and settings.enabled:
        note_cadence(state, {"interval": POLL.total_seconds()}, now)  # checked every hour
    if err is not None:
        raise ConfigError(err)  # the scheduler keeps checking on the last good cadence
    assert settings is not None
    if not settings.enabled:
        return None
    return now if due(ws, now, settings).due else now + POLL


def _run(ws: Workspace, now: datetime) -> dict[str, Any]:
    from memcore.sessions import dream
    from memcore.workspace.clock import utcnow

    settings, err = sessions_settings_for(ws)
    if settings is None:
        raise MemcoreError(err or "no session settings")
    # the last good settings when memcore.toml is invalid now
    return _counters(dream(ws, now=now, automatic=True, clock=utcnow, settings=settings))


def manual_job(session: str | None = None, project: str | None = None) -> Job:
    """A session dream run by hand in one scope (the gateway's start / continue / retry): no
    gates, the lease as always, and retry continues from the saved progress."""

    def run(ws: Workspace, now: datetime) -> dict[str, Any]:
        from memcore.sessions import dream
        from memcore.workspace.clock import utcnow

        return _counters(dream(ws, now=now, clock=utcnow, session=session, project=project))

    return Job(
        "sessions",
        lambda ws, now, state: None,
        run,
        description="a session dream started by hand",
        hold_lock=False,
    )


def _counters(report: dict[str, Any]) -> dict[str, Any]:
    """A run report as the scheduler's counters; a failed or stopped run raises."""
    if report["status"] == "skipped":
        raise JobSkipped(report["reason"], {"candidates": report.get("candidates", 0)})
    if report["status"] in ("failed", "stopped"):
        raise MemcoreError(f"session dream {report['status']}: {report.get('error')}")
    tokens = report.get("tokens", {})
    return {
        "status": report["status"],
        "reviewed": len(report.get("reviewed", [])),
        "written": len(report.get("wrote", [])),
        "skipped_sessions": len(report.get("skipped", [])),
        "queued": len(report.get("queued", [])),
        "calls": tokens.get("calls", 0),
        "tokens": tokens.get("charged", 0),
    }


JOB = register_job(
    Job(
        "sessions",
        _next_due,
        _run,
        description="session dreaming: finished sessions into short memories",
        hold_lock=False,
        poll_seconds=POLL.total_seconds(),
    )
)
