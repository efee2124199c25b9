"""The ``/dreaming`` chat command: text in, text out.

Replies follow OpenClaw's command (usage text, status block, mode guide) so agents and people
who know it feel at home. Only a mode word writes ``memcore.toml``; ``status``, ``help`` and
unknown words never write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memcore.errors import ConfigError
from memcore.workspace.clock import utcnow
from memcore.workspace.config import (
    MODES,
    PRESETS,
    DreamingSettings,
    dreaming_settings,
    load_config,
    set_value,
)
from memcore.workspace.core import Workspace


def js_number(value: float) -> str:
    """Numbers as JavaScript prints them: 0.8, 3, 0.75."""
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def status_block(s: DreamingSettings) -> str:
    cadence = s.cron if s.enabled and s.cron else "disabled"
    if s.enabled:
        cadence += f" ({s.timezone})"
    return "\n".join(
        [
            "Dreaming status:",
            f"- mode: {s.mode}",
            f"- cadence: {cadence}",
            f"- limit: {s.limit}",
            f"- thresholds: minScore={js_number(s.min_score)}, "
            f"minRecallCount={s.min_recall_count}, minUniqueQueries={s.min_unique_queries}",
        ]
    )


def mode_guide() -> str:
    lines = ["- off: disable automatic short-term to long-term promotion."]
    for mode in ("core", "rem", "deep"):
        p = PRESETS[mode]
        lines.append(
            f"- {mode}: cadence={p.cron}; minScore={js_number(p.min_score)}, "
            f"minRecallCount={p.min_recall_count}, minUniqueQueries={p.min_unique_queries}."
        )
    return "\n".join(lines)


def usage(s: DreamingSettings) -> str:
    return "\n".join(
        [
            "Usage: /dreaming off|core|rem|deep",
            "Use /dreaming status for current settings.",
            "",
            status_block(s),
            "",
            "Modes:",
            mode_guide(),
        ]
    )


def first_word(text: str) -> str:
    """The argument word of ``/dreaming <word> …`` (or of ``<word> …``), lowercased."""
    words = text.strip().split()
    if words and words[0].lower() in ("/dreaming", "dreaming"):
        words = words[1:]
    return words[0].lower() if words else ""


def _mode_warnings(
    ws: Workspace, mode: str, settings: DreamingSettings, now: datetime
) -> list[str]:
    """Why the chosen mode would promote nothing now (see status.mode_warnings)."""
    if mode == "off":
        return []
    from memcore.promotion.status import mode_warnings
    from memcore.recall.scoring import Thresholds

    return mode_warnings(ws, mode, Thresholds.from_settings(settings), now)


def handle_dreaming(ws: Workspace, text: str) -> str:
    """Answer one ``/dreaming`` command for the workspace."""
    return str(run_dreaming(ws, first_word(text))["reply"])


def run_dreaming(ws: Workspace, word: str, now: datetime | None = None) -> dict[str, Any]:
    """Run the ``/dreaming`` command ``word`` (a mode, ``status``, ``help`` or anything else,
    which answers with the usage): ``{command, changed, configError, settings, reply}``, and
    ``warnings`` after a mode change (why that mode would promote nothing now).

    Only a mode word writes ``memcore.toml``; an invalid config is reported, never changed."""
    word = word.strip().lower()
    out: dict[str, Any] = {"command": word, "changed": False, "configError": None}
    try:
        settings = dreaming_settings(load_config(ws))
    except ConfigError as exc:
        out["configError"] = str(exc)
        out["settings"] = None
        if word in MODES:
            # A mode change may be exactly what repairs nothing else; refuse clearly instead.
            out["reply"] = f"Dreaming config is invalid, nothing changed: {exc}"
        else:
            out["reply"] = f"Dreaming config is invalid: {exc}"
        return out
    if word == "status":
        reply = status_block(settings)
    elif word in MODES:
        set_value(ws, "dreaming", "mode", word)
        settings = dreaming_settings(load_config(ws))
        out["changed"] = True
        out["warnings"] = _mode_warnings(ws, word, settings, now or utcnow())
        reply = "\n".join(
            [
                f"Dreaming mode set to {word}.",
                *(f"Warning: {w}" for w in out["warnings"]),
                "",
                status_block(settings),
                "",
                "Modes:",
                mode_guide(),
            ]
        )
    else:
        reply = usage(settings)
    out["settings"] = {
        "mode": settings.mode,
        "enabled": settings.enabled,
        "cron": settings.cron if settings.enabled else None,
        "timezone": settings.timezone,
        "limit": settings.limit,
        "minScore": settings.min_score,
        "minRecallCount": settings.min_recall_count,
        "minUniqueQueries": settings.min_unique_queries,
    }
    out["reply"] = reply
    return out
