"""The ``consolidate`` scheduler job: checked at startup and every 30 minutes, it runs the cycle
unattended (``--auto``) when ``[consolidation] enabled`` and ``interval_hours`` have passed since
the last run (state in memcore.sqlite: the scheduler's and ``memcore dream``'s own runs).

It never promotes: promotion runs on the dreaming mode's cron only (the ``promote`` job). On a
workspace it has never run on, the first run is scheduled ``interval_hours`` after the gateway
first saw it, never at once: a gateway's first start applies nothing. Unattended runs apply
only what is safe (lossless merges, retention prunes, decay); conflicts and detail-losing
merges go to the review queue, and a run over ``max_loss_fraction`` is refused whole.

While ``[consolidation]`` cannot be read (memcore.toml edited into an invalid state), the job
keeps its last good interval and its runs use the last good consolidation settings, kept in
memcore.sqlite (``memcore.workspace.last_good``), as the promote job does with the dreaming
settings: a gateway restarted meanwhile runs on them too.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memcore.errors import ConfigError, JobSkipped, MemcoreError
from memcore.schedule.jobs import Job, JobState, note_cadence, register_job
from memcore.workspace.core import Workspace

if TYPE_CHECKING:
    from memcore.dream.settings import ConsolidationSettings


def consolidation_settings_for(ws: Workspace) -> tuple[ConsolidationSettings | None, str | None]:
    """The workspace's consolidation settings and the config error, if any: while
    memcore.toml is invalid, the last good settings with the error (None settings when
    there never were good ones)."""
    from memcore.dream.settings import ConsolidationSettings, consolidation_settings
    from memcore.workspace import last_good
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    return last_good.current_or_last_good(
        ws,
        "consolidation",
        lambda: consolidation_settings(load_config(ws)),
        ConsolidationSettings,
        utcnow(),
    )


def _next_due(ws: Workspace, now: datetime, state: JobState) -> datetime | None:
    from memcore.dream.cycle import last_run_at

    s, err = consolidation_settings_for(ws)
    if s is not None:
        note_cadence(state, {"interval": s.interval_hours * 3600.0}, now)
    if err is not None:
        raise ConfigError(err)  # the scheduler keeps the last good interval
    assert s is not None
    if not s.enabled or not ws.memory_md.is_file():
        return None  # disabled, or no long-term memory yet (re-checked at every tick)
    last = max((t for t in (state.last_run_at, last_run_at(ws)) if t is not None), default=None)
    if last is None:
        last = state.created_at or now  # first sight: the first run is one interval away
    return last + timedelta(hours=s.interval_hours)


def _run(ws: Workspace, now: datetime) -> dict[str, Any]:
    from memcore.dream.cycle import RESULT_KEYS, run_cycle
    from memcore.dream.plan import STEPS

    settings, err = consolidation_settings_for(ws)
    if settings is None:
        raise MemcoreError(err or "no consolidation settings")
    if not settings.enabled:
        raise JobSkipped("consolidation is disabled ([consolidation] enabled = false)")
    steps = tuple(s for s in STEPS if s != "promote")  # promotion is the promote job's
    res = run_cycle(
        ws,
        now=now,
        mode="auto",
        steps=steps,
        trigger="schedule",
        settings=settings,  # the last good settings when memcore.toml is invalid now
    )
    return {k: res[k] for k in (*RESULT_KEYS, "runId", "reviewPending")}


CONSOLIDATE_JOB = register_job(
    Job(
        name="consolidate",
        next_due=_next_due,
        run=_run,
        description="merge, reconcile, decay and forget MEMORY.md entries (dream --auto, "
        "no promotion)",
        poll_seconds=1800,
    )
)
