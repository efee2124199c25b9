"""``[consolidation]`` and ``[retention]`` of ``memcore.toml``, validated with ranges.

The last run time is *state* (``memcore.sqlite``), never config: editing settings does not reset
the cadence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcore.errors import ConfigError
from memcore.search.embeddings import BACKENDS, DEFAULT_BACKEND, default_backend
from memcore.workspace.config import Config, check_number, get_bool, get_number, get_str
from memcore.workspace.entries import TYPES

JUDGES = ("offline", "model")
DEFAULT_RETENTION: dict[str, int | None] = {"session_state": 90, "compact_summary": 90}


@dataclass(frozen=True)
class ConsolidationSettings:
    enabled: bool = True
    interval_hours: float = 24.0
    judge: str | None = None  # offline | model; None: model when [llm] names one, else offline
    decay_days: float = 30.0
    forget_days: float = 180.0
    forget_below_importance: float = 0.15
    embedder: str = DEFAULT_BACKEND  # a name of BACKENDS; memcore.search.embeddings resolves it
    max_loss_fraction: float = 0.25  # a run removing/rewriting more of MEMORY.md is refused
    retention: dict[str, int | None] = field(default_factory=lambda: dict(DEFAULT_RETENTION))


def consolidation_settings(cfg: Config) -> ConsolidationSettings:
    """Resolve ``[consolidation]`` and ``[retention]``; each bad value raises ConfigError."""
    t = "consolidation"
    decay = get_number(cfg, t, "decay_days", 30, lo=1, hi=3650)
    forget = get_number(cfg, t, "forget_days", 180, lo=1, hi=3650)
    if forget < decay:
        raise ConfigError(
            f"{cfg.where(t, 'forget_days')} = {forget:g} is out of range; allowed: a number from "
            f"decay_days ({decay:g}) to 3650"
        )
    embedder, table = get_str(cfg, t, "embedder", None), t
    if embedder is None:  # [search] embedder is the fallback, then $MEMCORE_EMBEDDER or "auto"
        embedder, table = get_str(cfg, "search", "embedder", None), "search"
    embedder = embedder or default_backend()
    if embedder.lower() not in BACKENDS:
        raise ConfigError(
            f"{cfg.where(table, 'embedder')} = {embedder!r} is not allowed; "
            f"allowed: {', '.join(BACKENDS)}"
        )
    judge = get_str(cfg, t, "judge", None)
    if judge is not None and judge.lower() not in JUDGES:
        raise ConfigError(
            f"{cfg.where(t, 'judge')} = {judge!r} is not allowed; allowed: {', '.join(JUDGES)}"
        )
    return ConsolidationSettings(
        enabled=get_bool(cfg, t, "enabled", True),
        interval_hours=get_number(cfg, t, "interval_hours", 24, lo=1, hi=720),
        judge=judge.lower() if judge is not None else None,
        decay_days=decay,
        forget_days=forget,
        forget_below_importance=get_number(cfg, t, "forget_below_importance", 0.15, lo=0.01, hi=1),
        embedder=embedder.lower(),
        max_loss_fraction=get_number(cfg, t, "max_loss_fraction", 0.25, lo=0.01, hi=1),
        retention=retention_settings(cfg),
    )


def retention_settings(cfg: Config) -> dict[str, int | None]:
    """``[retention]``: type = days (1-36500) or "never"; unknown types are errors."""
    out = dict(DEFAULT_RETENTION)
    for key, value in cfg.table("retention").items():
        where = cfg.where("retention", key)
        if key not in TYPES:
            raise ConfigError(f"{where} is not an entry type; allowed: {', '.join(TYPES)}")
        if isinstance(value, str) and value.strip().lower() in ("never", "forever"):
            out[key] = None
            continue
        if isinstance(value, str):
            raise ConfigError(
                f'{where} = {value!r} is not allowed; allowed: days (1 to 36500) or "never"'
            )
        out[key] = check_number(value, where, lo=1, hi=36500, integer=True)
    return out
