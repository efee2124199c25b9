"""The ``[sessions]`` table and where session dreaming keeps user-level data."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memcore.errors import ConfigError
from memcore.workspace.config import Config, get_bool, get_number, get_str
from memcore.workspace.core import Workspace

LEVELS = ("session", "project", "global")


@dataclass(frozen=True)
class SessionsSettings:
    enabled: bool = False
    interval_days: int = 7
    min_sessions: int = 5
    model: str | None = None
    path: str = "sessions/"
    session_limit: int = 1200
    project_limit: int = 2400
    global_limit: int = 600
    raw_idle_days: float = 7.0
    daily_token_budget: int = 200_000
    independent: tuple[str, ...] = ()
    memory_load_budget: int = 20_000  # characters of MEMORY.md an agent loads (health report)

    def limit(self, level: str) -> int:
        return {"session": self.session_limit, "project": self.project_limit}.get(
            level, self.global_limit
        )

    def sessions_dir(self, ws: Workspace) -> Path:
        p = Path(self.path).expanduser()
        return p if p.is_absolute() else ws.root / p


def sessions_settings(cfg: Config) -> SessionsSettings:
    """Resolve and validate ``[sessions]`` (and its ``limits`` sub-table)."""
    t = "sessions"
    limits = cfg.table(t).get("limits", {})
    if not isinstance(limits, dict):
        raise ConfigError(f"{cfg.where(t, 'limits')} must be a table: session, project, global")
    for key in limits:
        if key not in LEVELS:
            raise ConfigError(
                f"{cfg.where(t, 'limits.' + key)} is not a level; allowed: {', '.join(LEVELS)}"
            )

    def limit(key: str, default: int) -> int:
        from memcore.workspace.config import check_number

        if key not in limits:
            return default
        return check_number(
            limits[key], cfg.where(t, "limits." + key), lo=100, hi=20_000, integer=True
        )

    independent = cfg.table(t).get("independent", [])
    if not isinstance(independent, list) or not all(isinstance(x, str) for x in independent):
        raise ConfigError(
            f"{cfg.where(t, 'independent')} = {independent!r} must be a list of session ids"
        )
    return SessionsSettings(
        enabled=get_bool(cfg, t, "enabled", False),
        interval_days=get_number(cfg, t, "interval_days", 7, lo=1, hi=365, integer=True),
        min_sessions=get_number(cfg, t, "min_sessions", 5, lo=1, hi=100, integer=True),
        model=get_str(cfg, t, "model", None),
        path=get_str(cfg, t, "path", "sessions/") or "sessions/",
        session_limit=limit("session", 1200),
        project_limit=limit("project", 2400),
        global_limit=limit("global", 600),
        raw_idle_days=get_number(cfg, t, "raw_idle_days", 7.0, lo=0, hi=3650),
        daily_token_budget=get_number(
            cfg, t, "daily_token_budget", 200_000, lo=0, hi=1_000_000_000, integer=True
        ),
        independent=tuple(independent),
        memory_load_budget=get_number(
            cfg, t, "memory_load_budget", 20_000, lo=100, hi=10_000_000, integer=True
        ),
    )


def user_dir() -> Path:
    """``$MEMCORE_USER_DIR``, else the platform's user data directory for memcore."""
    env = os.environ.get("MEMCORE_USER_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("memcore", appauthor=False))


def project_id(ws: Workspace) -> str:
    """Stable id of the workspace as a project: folder name plus a short hash of its path."""
    import hashlib
    import re

    root = ws.root.resolve()
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"
    return f"{slug[:40]}-{hashlib.sha1(str(root).encode()).hexdigest()[:6]}"
