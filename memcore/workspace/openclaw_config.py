"""OpenClaw's ``openclaw.json``, read for its dreaming settings (never written).

The dreaming block is ``plugins.entries["memory-core"].config.dreaming``: ``mode``
(off/core/rem/deep) or the newer ``enabled`` + ``frequency``, ``cron``, ``timezone`` (else
``agents.defaults.userTimezone``), ``limit``, ``minScore``, ``minRecallCount``,
``minUniqueQueries``, ``recencyHalfLifeDays`` (also under ``phases.deep``). The file may hold
JSON5 comments and trailing commas.

:func:`read_dreaming` turns it into a memcore ``[dreaming]`` table. A value memcore cannot use
is a warning naming the file, the key and what is allowed, and falls back to the mode's preset
as OpenClaw does; a file that does not parse is a warning and gives nothing. When memcore.toml
has a ``[dreaming]`` table, it wins (:func:`memcore.workspace.config.load_config`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.workspace.config import MODES, check_cron, check_timezone

KEY = 'plugins.entries["memory-core"].config.dreaming'
_COMMENT_RE = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")
#: openclaw.json key -> memcore [dreaming] key, lower bound, upper bound, whole number.
NUMBERS: dict[str, tuple[str, float, float, bool]] = {
    "limit": ("limit", 0, 10000, True),
    "minScore": ("min_score", 0, 1, False),
    "minRecallCount": ("min_recall_count", 0, 100000, True),
    "minUniqueQueries": ("min_unique_queries", 0, 32, True),
    "recencyHalfLifeDays": ("recency_half_life_days", 0.01, 3650, False),
}


@dataclass
class OpenClawDreaming:
    """What openclaw.json says about dreaming, as a memcore ``[dreaming]`` table."""

    path: Path
    table: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    found: bool = False  # the file has a dreaming block

    @property
    def schedules(self) -> bool:
        """True when OpenClaw itself would run dreaming on this workspace."""
        return bool(self.table.get("mode", "off") != "off")


def loads_json5(text: str) -> Any:
    """JSON with ``//`` and ``/* */`` comments and trailing commas allowed."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        stripped = _COMMENT_RE.sub(lambda m: m.group(1) or "", text)
        return json.loads(_TRAILING_COMMA_RE.sub(r"\1", stripped))


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def read_dreaming(path: Path) -> OpenClawDreaming:
    """The dreaming settings of ``path`` (see the module docstring); never raises for what the
    file holds, only warns."""
    out = OpenClawDreaming(path)
    try:
        doc = loads_json5(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        out.warnings.append(f"{path}: cannot read ({exc}); its dreaming settings are ignored")
        return out
    except json.JSONDecodeError as exc:
        out.warnings.append(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); allowed: JSON with "
            "// or /* */ comments and trailing commas; its dreaming settings are ignored"
        )
        return out
    d = _dig(doc, "plugins", "entries", "memory-core", "config", "dreaming")
    if d is None:
        return out
    where = f"{path} {KEY}"
    if not isinstance(d, dict):
        out.warnings.append(f"{where} = {d!r:.40} is not allowed; allowed: an object; ignored")
        return out
    out.found = True
    t = out.table
    mode = d.get("mode")
    if mode is not None:
        m = str(mode).strip().lower()
        if m in MODES:
            t["mode"] = m
        else:
            out.warnings.append(
                f"{where}.mode = {mode!r} is not a mode; allowed: {', '.join(MODES)} "
                "(OpenClaw reads it as off)"
            )
            t["mode"] = "off"
    elif "enabled" in d:
        enabled = d["enabled"]
        if isinstance(enabled, bool):
            t["mode"] = "core" if enabled else "off"
        else:
            out.warnings.append(
                f"{where}.enabled = {enabled!r} is not allowed; allowed: true, false; ignored"
            )
    cron_key = next((k for k in ("cron", "frequency") if _first_str(d, k)), "cron")
    cron = _first_str(d, "cron", "frequency")
    if cron is not None:
        try:
            check_cron(cron, f"{where}.{cron_key}")
            t["cron"] = cron
        except ConfigError as exc:
            out.warnings.append(f"{exc}; the mode's cadence applies")
    tz = d.get("timezone")
    tz_key = f"{where}.timezone"
    if not tz:
        tz = _dig(doc, "agents", "defaults", "userTimezone")
        tz_key = f"{path} agents.defaults.userTimezone"
    if tz is not None:
        try:
            check_timezone(str(tz), tz_key)
            t["timezone"] = str(tz)
        except ConfigError as exc:
            out.warnings.append(f"{exc}; the local timezone applies")
    deep = _dig(d, "phases", "deep")
    for src, (dst, lo, hi, whole) in NUMBERS.items():
        key = src
        if src in d:
            value = d[src]
        else:
            value, key = (deep.get(src) if isinstance(deep, dict) else None), f"phases.deep.{src}"
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        num = _number(value)
        if num is None or not lo <= num <= hi:
            out.warnings.append(
                f"{where}.{key} = {value!r} is not allowed; allowed: a number from {lo:g} to "
                f"{hi:g} (the mode's preset applies)"
            )
            continue
        t[dst] = math.floor(num) if whole else num
    return out


def _first_str(d: dict[str, Any], *keys: str) -> str | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None
