"""The ``consolidate`` scheduler job: checked at startup and every 30 minutes, it runs the cycle
unattended (``--auto``) when ``[consolidation] enabled`` and ``interval_hours`` have passed since
the last run (state in memcore.sqlite: the scheduler's and ``memcore dream``'s own runs).

It never promotes: promotion runs on the dreaming mode's cron only (the ``promote`` job). On a
workspace it has never run on, the first run is scheduled ``interval_hours`` after the gateway
first saw it, never at once: a gateway's first start applies nothing. Unattended runs apply
only what is safe (lossless merges, retention prunes, decay); conflicts and detail-losing
merges go to the review queue, and a run over ``max_loss_fraction`` is refused whole.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from memcore.schedule.jobs import Job, JobState, note_cadence, register_job
from memcore.workspace.core import Workspace


def _next_due(ws: Workspace, now: datetime, state: JobState) -> datetime | None:
    from memcore.dream.cycle import last_run_at
    from memcore.dream.settings import consolidation_settings
    from memcore.workspace.config import load_config

    s = consolidation_settings(load_config(ws))  # raises ConfigError when invalid
    note_cadence(state, {"interval": s.interval_hours * 3600.0}, now)
    if not s.enabled or not ws.memory_md.is_file():
        return None  # disabled, or no long-term memory yet (re-checked at every tick)
    last = max((t for t in (state.last_run_at, last_run_at(ws)) if t is not None), default=None)
    if last is None:
        last = state.created_at or now  # first sight: the first run is one interval away
    return last + timedelta(hours=s.interval_hours)


def _run(ws: Workspace, now: datetime) -> dict[str, Any]:
    from memcore.dream.cycle import RESULT_KEYS, run_cycle
    from memcore.dream.plan import STEPS

    steps = tuple(s for s in STEPS if s != "promote")  # promotion is the promote job's
    res = run_cycle(ws, now=now, mode="auto", steps=steps, trigger="schedule")
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
