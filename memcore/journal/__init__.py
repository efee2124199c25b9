"""The run journal: every change memcore makes to a user's file is one write-ahead run that can
be listed, shown and undone, with past versions of MEMORY.md kept to restore.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.journal.history import list_runs, restore_version, show_run, versions
    from memcore.journal.runs import (
        Change,
        changes_of,
        get_run,
        last_applied_at,
        latest_undoable,
        new_run_id,
    )
    from memcore.journal.wal import RunSpec, commit_run, recover

__all__ = [
    "Change",
    "RunSpec",
    "changes_of",
    "commit_run",
    "get_run",
    "last_applied_at",
    "latest_undoable",
    "list_runs",
    "new_run_id",
    "recover",
    "restore_version",
    "show_run",
    "versions",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "history": ("list_runs", "restore_version", "show_run", "versions"),
        "runs": (
            "Change",
            "changes_of",
            "get_run",
            "last_applied_at",
            "latest_undoable",
            "new_run_id",
        ),
        "wal": ("RunSpec", "commit_run", "recover"),
    },
)
