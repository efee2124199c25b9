"""memcore: keeps an AI agent's markdown memory healthy while the agent sleeps.

The version lives only in ``pyproject.toml``; ``memcore.__version__`` reads it from the installed
package's metadata the first time it is asked for, so ``import memcore`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcore.workspace.core import Workspace

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("memcore")
        except PackageNotFoundError:  # imported from a source tree that was never installed
            found = "0+unknown"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'memcore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "__version__"})


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
