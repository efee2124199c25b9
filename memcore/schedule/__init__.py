"""Scheduled jobs: registration, due times (intervals and cron) and their state in SQLite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.schedule.jobs import (
        Job,
        RunOutcome,
        compute_due,
        cron_next_due,
        cron_slots_after,
        execute,
        get_job,
        register_job,
        unregister_job,
    )
    from memcore.schedule.state import JobState, load_state, mark_interrupted, recent_runs

__all__ = [
    "Job",
    "JobState",
    "RunOutcome",
    "compute_due",
    "cron_next_due",
    "cron_slots_after",
    "execute",
    "get_job",
    "load_state",
    "mark_interrupted",
    "recent_runs",
    "register_job",
    "unregister_job",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "jobs": (
            "Job",
            "RunOutcome",
            "compute_due",
            "cron_next_due",
            "cron_slots_after",
            "execute",
            "get_job",
            "register_job",
            "unregister_job",
        ),
        "state": ("JobState", "load_state", "mark_interrupted", "recent_runs"),
    },
)
