"""Settings from ``memcore.toml``: loading, validation with clear errors, presets, edits.

Each feature reads its own table through the validators here, so an invalid value always
gets one message naming the file, the key, the value and what is allowed.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memcore.errors import ConfigError
from memcore.workspace.core import Workspace, atomic_write_text

MODES = ("off", "core", "rem", "deep")

#: Mean relevance below which no entry is promoted, in every mode (memcore.recall.scoring says
#: why): a calibrated search score of 0.5 is a hit as likely to answer its query as not.
DEFAULT_MIN_RELEVANCE = 0.5


@dataclass(frozen=True)
class Preset:
    cron: str | None
    min_score: float
    min_recall_count: int
    min_unique_queries: int
    limit: int = 10
    min_relevance: float = DEFAULT_MIN_RELEVANCE


PRESETS: dict[str, Preset] = {
    "off": Preset(None, 0.75, 3, 2),
    "core": Preset("0 3 * * *", 0.75, 3, 2),
    "rem": Preset("0 */6 * * *", 0.85, 4, 3),
    "deep": Preset("0 */12 * * *", 0.80, 3, 3),
}

DEFAULT_WEIGHTS = {"frequency": 0.35, "relevance": 0.35, "diversity": 0.15, "recency": 0.15}
DEFAULT_HALF_LIFE_DAYS = 14.0
DEFAULT_MAX_ENTRIES = 5000


@dataclass
class Config:
    """The parsed ``memcore.toml`` (empty when the file is missing)."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    #: Where ``[dreaming]`` comes from: memcore.toml, or OpenClaw's openclaw.json when
    #: memcore.toml has no such table (``dreaming_source`` names the file then).
    dreaming_source: str | None = None
    notes: list[str] = field(default_factory=list)  # warnings about openclaw.json

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(
                f"{self.path.name}: [{name}] must be a table, got {shown_value(value)}"
            )
        return value

    def where(self, table: str, key: str) -> str:
        return f"{self.path.name}: [{table}] {key}"


def load_config(ws: Workspace) -> Config:
    """Read ``memcore.toml`` of the workspace; a missing file means every default.

    Without a ``[dreaming]`` table there, OpenClaw's ``openclaw.json`` (beside the workspace
    or above it) gives the dreaming settings when it has them, so one workspace has one
    configuration (:mod:`memcore.workspace.openclaw_config`)."""
    path = ws.config_path
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not valid UTF-8") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    cfg = Config(path, data, dreaming_source=path.name if "dreaming" in data else None)
    from memcore.workspace.kinds import openclaw_config_path

    oc_path = openclaw_config_path(ws.root)
    if oc_path is not None and "dreaming" not in data:
        from memcore.workspace.openclaw_config import read_dreaming

        oc = read_dreaming(oc_path)
        cfg.notes.extend(oc.warnings)
        if oc.found:
            cfg.data = {**data, "dreaming": oc.table}
            cfg.dreaming_source = str(oc_path)
    return cfg


# -- validators -------------------------------------------------------------------------


def get_number(
    cfg: Config,
    table: str,
    key: str,
    default: float | None,
    *,
    lo: float | None = None,
    hi: float | None = None,
    integer: bool = False,
    aliases: tuple[str, ...] = (),
) -> Any:
    """A number from ``[table] key`` within [lo, hi]; ``default`` when absent."""
    tbl = cfg.table(table)
    name = key
    value = tbl.get(key)
    for alias in aliases:
        if value is None and alias in tbl:
            value, name = tbl[alias], alias
    if value is None:
        return default
    return check_number(value, cfg.where(table, name), lo=lo, hi=hi, integer=integer)


@overload
def check_number(
    value: object,
    where: str,
    *,
    lo: float | None = ...,
    hi: float | None = ...,
    integer: Literal[True],
) -> int: ...
@overload
def check_number(
    value: object,
    where: str,
    *,
    lo: float | None = ...,
    hi: float | None = ...,
    integer: Literal[False] = ...,
) -> float: ...
@overload
def check_number(
    value: object,
    where: str,
    *,
    lo: float | None = ...,
    hi: float | None = ...,
    integer: bool,
) -> int | float: ...
def check_number(
    value: object,
    where: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    integer: bool = False,
) -> int | float:
    """Validate one number; raise ConfigError naming ``where`` and the allowed range."""
    allowed = _range_text(lo, hi, integer)
    shown = shown_value(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where} = {shown} is not a number; allowed: {allowed}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where} = {shown} is not finite; allowed: {allowed}")
    # compare before any float(): an integer past 1.8e308 has no float
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{where} = {shown} is out of range; allowed: {allowed}")
    if integer and isinstance(value, float) and not value.is_integer():
        raise ConfigError(f"{where} = {shown} is not a whole number; allowed: {allowed}")
    return int(value) if integer else float(value)


def shown_value(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    try:
        text = repr(value)
    except ValueError:  # an int with more digits than Python prints
        text = f"<an integer of {value.bit_length()} bits>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _range_text(lo: float | None, hi: float | None, integer: bool) -> str:
    kind = "an integer" if integer else "a number"
    if lo is not None and hi is not None:
        return f"{kind} from {lo:g} to {hi:g}"
    if lo is not None:
        return f"{kind} >= {lo:g}"
    if hi is not None:
        return f"{kind} <= {hi:g}"
    return kind


def get_bool(cfg: Config, table: str, key: str, default: bool) -> bool:
    value = cfg.table(table).get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(
            f"{cfg.where(table, key)} = {shown_value(value)} is not a boolean; "
            "allowed: true or false"
        )
    return value


def get_str(
    cfg: Config, table: str, key: str, default: str | None, *, aliases: tuple[str, ...] = ()
) -> str | None:
    tbl = cfg.table(table)
    name = key
    value = tbl.get(key)
    for alias in aliases:
        if value is None and alias in tbl:
            value, name = tbl[alias], alias
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError(f"{cfg.where(table, name)} = {shown_value(value)} is not a string")
    value = value.strip()
    return value or default


def get_choice(cfg: Config, table: str, key: str, default: str, choices: tuple[str, ...]) -> str:
    value = get_str(cfg, table, key, default)
    assert value is not None
    low = value.lower()
    if low not in choices:
        raise ConfigError(
            f"{cfg.where(table, key)} = {shown_value(value)} is not allowed; "
            f"allowed: {', '.join(choices)}"
        )
    return low


def check_cron(expr: str, where: str) -> str:
    from croniter import croniter

    bad = f"{where} = {shown_value(expr)} is not a valid cron expression (e.g. '0 3 * * *')"
    if not croniter.is_valid(expr):
        raise ConfigError(bad)
    try:  # valid syntax that never fires (Feb 30) fails only when the next run is asked for
        croniter(expr, datetime(2026, 1, 1)).get_next(datetime)
    except Exception:
        raise ConfigError(bad + "; it never fires") from None
    return expr


def check_timezone(name: str, where: str) -> ZoneInfo:
    """The zone named ``name``; ConfigError for anything else (an unknown name, a folder of
    zones like 'America', a name too long for the file system, a NUL)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError, UnicodeError):
        raise ConfigError(
            f"{where} = {shown_value(name)} is not a known IANA timezone (e.g. 'Europe/Berlin')"
        ) from None


def local_timezone_name() -> str:
    """The host's IANA zone name when it can be found, else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            ZoneInfo(tz)
            return tz
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        link = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in link:
            name = link.split("zoneinfo/", 1)[1]
            ZoneInfo(name)
            return name
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    return "UTC"


# -- dreaming ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DreamingSettings:
    """The resolved ``[dreaming]`` table: mode, schedule and promotion thresholds."""

    mode: str = "off"
    cron: str | None = None
    timezone: str = "UTC"
    limit: int = 10
    min_score: float = 0.75
    min_recall_count: int = 3
    min_unique_queries: int = 2
    min_relevance: float = DEFAULT_MIN_RELEVANCE
    recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    max_entries: int = DEFAULT_MAX_ENTRIES
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    timezone_explicit: bool = False

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def dreaming_settings(cfg: Config) -> DreamingSettings:
    """Resolve ``[dreaming]``: explicit values win over the mode's preset. Invalid values raise."""
    t = "dreaming"
    mode = get_choice(cfg, t, "mode", "off", MODES)
    preset = PRESETS[mode]
    cron = get_str(cfg, t, "cron", None, aliases=("frequency",))
    if cron is not None:
        key = "cron" if "cron" in cfg.table(t) else "frequency"
        check_cron(cron, cfg.where(t, key))
    else:
        cron = preset.cron
    tz_name = get_str(cfg, t, "timezone", None)
    if tz_name is not None:
        check_timezone(tz_name, cfg.where(t, "timezone"))
    weights = dict(DEFAULT_WEIGHTS)
    wt = cfg.table(t).get("weights")
    if wt is not None:
        if not isinstance(wt, dict):
            raise ConfigError(f"{cfg.where(t, 'weights')} must be a table of signal = weight")
        for k, v in wt.items():
            if k not in DEFAULT_WEIGHTS:
                raise ConfigError(
                    f"{cfg.where(t, 'weights.' + k)} is not a signal; "
                    f"allowed: {', '.join(DEFAULT_WEIGHTS)}"
                )
            weights[k] = check_number(v, cfg.where(t, "weights." + k), lo=0, hi=100)
        if sum(weights.values()) <= 0:
            raise ConfigError(f"{cfg.where(t, 'weights')} must not all be zero")
    return DreamingSettings(
        mode=mode,
        cron=cron,
        timezone=tz_name or local_timezone_name(),
        timezone_explicit=tz_name is not None,
        limit=get_number(cfg, t, "limit", preset.limit, lo=0, hi=10000, integer=True),
        min_score=get_number(cfg, t, "min_score", preset.min_score, lo=0, hi=1),
        min_recall_count=get_number(
            cfg, t, "min_recall_count", preset.min_recall_count, lo=0, hi=100000, integer=True
        ),
        min_unique_queries=get_number(
            cfg, t, "min_unique_queries", preset.min_unique_queries, lo=0, hi=32, integer=True
        ),
        min_relevance=get_number(cfg, t, "min_relevance", preset.min_relevance, lo=0, hi=1),
        recency_half_life_days=get_number(
            cfg, t, "recency_half_life_days", DEFAULT_HALF_LIFE_DAYS, lo=0.01, hi=3650
        ),
        max_entries=get_number(
            cfg, t, "max_entries", DEFAULT_MAX_ENTRIES, lo=10, hi=10_000_000, integer=True
        ),
        weights=weights,
    )


def set_value(ws: Workspace, table: str, key: str, value: Any) -> None:
    """Set one key of ``memcore.toml``, keeping comments and sibling keys (tomlkit)."""
    import tomlkit

    path = ws.config_path
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:
        raise ConfigError(f"{path}: invalid TOML, not edited: {exc}") from None
    if table not in doc:
        doc[table] = tomlkit.table()
    doc[table][key] = value
    atomic_write_text(path, tomlkit.dumps(doc))


DEFAULT_CONFIG_TEXT = """\
# memcore configuration. Every key is optional; the values shown are the defaults.

[dreaming]
# off | core | rem | deep. "off" disables scheduled promotion; manual runs use core's thresholds.
mode = "off"
# cron = "0 3 * * *"        # overrides the mode's cadence (alias: frequency)
# timezone = "UTC"          # IANA zone for the schedule and section dates (default: host zone)
# limit = 10                # most entries promoted per run; 0 skips promotion
# min_score = 0.75          # gates; the mode's preset when unset
# min_recall_count = 3
# min_unique_queries = 2
# min_relevance = 0.5       # mean hit score an entry needs, whatever its recall count
# recency_half_life_days = 14
# max_entries = 5000        # cap on the recall store

# [search]
# record = true             # false: searches never write the recall store
# max_file_bytes = 5242880  # larger markdown files are skipped (and named in memory status)

# [dreaming.weights]
# frequency = 0.35
# relevance = 0.35
# diversity = 0.15
# recency = 0.15
"""
