"""The promote job: promotion on the dreaming mode's cron, registered with the scheduler."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from memcore.errors import JobSkipped, MemcoreError
from memcore.schedule.jobs import Job, cron_next_due, register_job
from memcore.schedule.state import JobState
from memcore.workspace.core import Workspace

__all__ = ["PROMOTE_JOB", "dreaming_settings_for"]


def dreaming_settings_for(ws: Workspace) -> tuple[Any, str | None]:
    """The workspace's dreaming settings and the config error, if any.

    When ``memcore.toml`` is invalid, the last good settings are returned with the error:
    those this workspace last had, kept in memcore.sqlite (``memcore.workspace.last_good``),
    so a gateway restarted while the file is invalid still runs on them. None settings when
    there never were good ones.
    """
    from memcore.workspace import last_good
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import dreaming_settings, load_config

    try:
        settings = dreaming_settings(load_config(ws))
    except MemcoreError as exc:
        return _stored_settings(ws), str(exc)
    last_good.remember(ws, "dreaming", dataclasses.asdict(settings), utcnow())
    return settings, None


def last_good_saved_at(ws: Workspace) -> datetime | None:
    """When the last good dreaming settings were saved (they are used while the file is
    invalid), or None."""
    from memcore.workspace import last_good

    got = last_good.recall(ws, "dreaming")
    return None if got is None else got[1]


def _stored_settings(ws: Workspace) -> Any:
    """The last good settings from memcore.sqlite, or None (none saved, or unusable)."""
    from memcore.workspace import last_good
    from memcore.workspace.config import MODES, DreamingSettings

    got = last_good.recall(ws, "dreaming")
    if got is None:
        return None
    names = {f.name for f in dataclasses.fields(DreamingSettings)}
    try:
        s = DreamingSettings(**{k: v for k, v in got[0].items() if k in names})
        s.tz  # noqa: B018 - a timezone this machine no longer knows makes them unusable
    except (TypeError, ValueError, KeyError, OSError):
        return None
    return s if s.mode in MODES else None


def _promote_next_due(ws: Workspace, now: datetime, state: JobState) -> datetime | None:
    settings, err = dreaming_settings_for(ws)
    if err is not None:
        raise MemcoreError(err)
    if not settings.enabled or not settings.cron:
        return None
    return cron_next_due(settings.cron, settings.tz, now, state)


def _promote_run(ws: Workspace, now: datetime) -> dict[str, Any]:
    from memcore.promotion import promote

    settings, err = dreaming_settings_for(ws)
    if settings is None:
        raise MemcoreError(err or "no dreaming settings")
    if settings.limit == 0:
        raise JobSkipped("limit = 0", {"promoted": 0})
    res = promote.apply(
        ws,
        now=now,
        settings=settings,  # the last good settings when memcore.toml is invalid now
        trigger="schedule",
    ).to_json()
    applied = res.get("apply") or {}
    return {
        "promoted": int(applied.get("applied", 0) or 0),
        "candidates": len(res.get("candidates") or []),
        "skipped": len(applied.get("skipped") or []),
    }


PROMOTE_JOB = register_job(
    Job(
        name="promote",
        next_due=_promote_next_due,
        run=_promote_run,
        description="promote qualifying recalls into MEMORY.md on the mode's cron",
    )
)
