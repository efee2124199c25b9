"""memcore: keeps an AI agent's markdown memory healthy while the agent sleeps."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcore.workspace.core import Workspace

__version__ = "0.1.0"


def _recover_interrupted_run(ws: Workspace) -> None:
    """Roll back a run that was killed before it finished (see memcore.journal.wal)."""
    from memcore.journal import wal

    wal.recover(ws)


def _wire() -> None:
    # The workspace lock is a layer below the journal; it calls recovery through this hook.
    from memcore.workspace import core

    if _recover_interrupted_run not in core.LOCK_RECOVERY_HOOKS:
        core.LOCK_RECOVERY_HOOKS.append(_recover_interrupted_run)


_wire()
